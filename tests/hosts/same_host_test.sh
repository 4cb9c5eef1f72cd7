#!/bin/sh
# "Same host" is decided by what ranks can share, not by names (issue 29). Four set-ups, each a
# real rccrun job of host_probe, which prints the host rcc_comm_host gives each rank:
#   1. plain ranks on this machine: one host;
#   2. two test hosts (network, mount and UTS namespaces: private /dev/shm, own hostname): two;
#   3. "containers": own network namespace and hostname each, but this machine's /dev/shm: one;
#   4. one network, but each rank with a private /dev/shm: two hosts.
# Usage: same_host_test.sh RCCRUN HOST_PROBE SCRIPTS_DIR
set -u
rccrun=$1
probe=$2
scripts=$3
. "$(dirname "$0")/lib.sh"
net=${RCC_TEST_NET:-81}
hosts="rcchs-a rcchs-b"
dir=$(mktemp -d /tmp/rcc-same-host.XXXXXX)
cleanup() {
  hosts_down "$net" $hosts
  rm -rf "$dir"
}
trap cleanup EXIT
hosts_up "$net" $hosts

failed=0
expect() {  # expect TEXT OUTPUT
  case "$2" in
  *"$1"*) ;;
  *) echo "FAIL: missing '$1'"; failed=1 ;;
  esac
}
run() {  # run LABEL RCCRUN-ARGS...: the job's output, exit status checked
  label=$1
  shift
  echo "=== $label"
  out=$(RCC_SOCKET_IFNAME=rccbr$net "$rccrun" --tag-output --timeout 60 "$@" --env RCC_TRANSPORT=ucx \
    --env UCX_TLS=tcp,self "$probe" 2>&1)
  rc=$?
  echo "$out"
  [ $rc -eq 0 ] || { echo "FAIL: $label: rccrun exited $rc"; failed=1; }
}

run "one machine" -n 3
for r in 0 1 2; do expect "rank $r host 0 of 1 name" "$out"; done

run "two test hosts" -H rcchs-a:2,rcchs-b:1 --rsh "$scripts/netns-rsh"
expect "rank 0 host 0 of 2 name rcchs-a ok" "$out"
expect "rank 1 host 0 of 2 name rcchs-a ok" "$out"
expect "rank 2 host 1 of 2 name rcchs-b ok" "$out"

# Containers: network namespace and hostname of their own, /dev/shm of this machine.
cat >"$dir/container-rsh" <<EOS
#!/bin/sh
h=\$1
shift
exec ip netns exec "\$h" unshare --uts sh -c "hostname c-\$h && \$*"
EOS
chmod +x "$dir/container-rsh"
run "containers sharing /dev/shm" -H rcchs-a:1,rcchs-b:1 --rsh "$dir/container-rsh"
expect "rank 0 host 0 of 1 name c-rcchs-a ok" "$out"
expect "rank 1 host 0 of 1 name c-rcchs-b ok" "$out"

# One network (this machine's), one hostname, but each rank's own /dev/shm.
cat >"$dir/private-shm-rsh" <<EOS
#!/bin/sh
shift
exec unshare --mount --propagation private sh -c "mount -t tmpfs tmpfs /dev/shm && \$*"
EOS
chmod +x "$dir/private-shm-rsh"
run "private /dev/shm, one network" -H shm-a:1,shm-b:1 --rsh "$dir/private-shm-rsh"
expect "rank 0 host 0 of 2 name" "$out"
expect "rank 1 host 1 of 2 name" "$out"

[ $failed -eq 0 ] && echo PASS
exit $failed
