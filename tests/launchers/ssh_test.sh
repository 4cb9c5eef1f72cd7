#!/bin/bash
# rccrun -H over real OpenSSH: an sshd (started here, stopped at the end also on failure) in each
# of two network-namespace hosts, a key made for the test, and rccrun's default remote shell
# (ssh, configured by a drop-in in /etc/ssh/ssh_config.d that is removed at the end). A 2-host
# job runs the launch probe and the p2p suite; while a job runs, no process's command line on
# either host holds the job secret (rccrun passes it on the remote command's standard input).
#   ssh_test.sh RCCRUN BUILD_DIR SCRIPTS_DIR
set -u
rccrun=$1
build=$2
scripts=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/common.sh"
. "$here/lib/ssh.sh"
set_programs "$build"
net=80
hosts="rccssh-a rccssh-b"
dir=$(mktemp -d /var/tmp/rcc-ssh.XXXXXX)
dropin=/etc/ssh/ssh_config.d/rcc-test-$net.conf
cleanup() {
  for pidfile in "$dir"/sshd.*.pid; do [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null; done
  rm -f "$dropin"
  RCC_NETNS_NET=$net "$scripts/netns-hosts.sh" down $hosts
  rm -rf "$dir"
}
trap cleanup EXIT
RCC_NETNS_NET=$net "$scripts/netns-hosts.sh" up $hosts || { echo "FAIL: cannot make the hosts"; exit 1; }
mkdir -p /run/sshd "$(dirname "$dropin")"
ssh_test_setup "$dir" || exit 1
i=2
for host in $hosts; do
  ip netns exec "$host" /usr/sbin/sshd -f "$dir/sshd_config" -o "ListenAddress=10.$net.0.$i" \
    -o "PidFile=$dir/sshd.$host.pid" -E "$dir/sshd.$host.log" ||
    { echo "FAIL: sshd did not start in $host"; cat "$dir/sshd.$host.log"; exit 1; }
  i=$((i + 1))
done
ssh_test_client "$dir" "10.$net.0.*" >"$dropin"
a=10.$net.0.2
b=10.$net.0.3
# The ranks dial back to rccrun's store on the bridge.
export RCC_SOCKET_IFNAME=rccbr$net

run_job "ssh reaches both hosts" 0 "^reached$" -- sh -c "ssh $a echo reached && ssh $b echo reached"
run_job "rccrun -H a:1,b:1 over ssh: launch probe" 0 "launch probe: 2 ranks ok" -- \
  "$rccrun" -H "$a:1,$b:1" --tag-output "$probe"
run_job "rccrun -H a:2,b:2 over ssh: p2p suite" 0 -- "$rccrun" -H "$a:2,$b:2" --tag-output "$p2p" --gtest_brief=1

# The secret on no command line: sample every process's command line while a job runs.
"$rccrun" -H "$a:1,$b:1" --tag-output sh -c 'echo "secret=$RCC_JOB_SECRET"; sleep 3' >"$dir/job.out" 2>&1 &
job=$!
: >"$dir/cmdlines"
while kill -0 $job 2>/dev/null; do
  ps -eww -o args= >>"$dir/cmdlines"
  sleep 0.1
done
wait $job
status=$?
secret=$(sed -n 's/.*secret=//p' "$dir/job.out" | sort -u)
if [ $status -ne 0 ] || ! echo "$secret" | grep -Eq '^[0-9a-f]{32}$' || [ "$(echo "$secret" | wc -l)" != 1 ]; then
  echo "FAIL the ranks did not get one secret (exit $status):"
  cat "$dir/job.out"
  failed=$((failed + 1))
elif grep -q "$secret" "$dir/cmdlines"; then
  echo "FAIL the secret is on a command line:"
  grep "$secret" "$dir/cmdlines" | head
  failed=$((failed + 1))
elif ! grep -q "sshd.*10.$net\|ssh $a\|ssh $b\|rcc-rank" "$dir/cmdlines"; then
  echo "FAIL the sampling saw none of the job's processes"
  failed=$((failed + 1))
else
  echo "ok   the secret is on none of $(sort -u "$dir/cmdlines" | wc -l) command lines seen on both hosts"
  passed=$((passed + 1))
fi
finish
