# Sourced by the tests of this folder: hosts_up NET NAME... makes test hosts (scripts/netns-hosts.sh)
# on network NET or fails the test; hosts_down NET NAME... removes them. Needs $scripts.
hosts_up() {
  net=$1
  shift
  if ! RCC_NETNS_NET=$net "$scripts/netns-hosts.sh" up "$@"; then
    echo "FAIL: cannot make the test hosts (needs root, iproute2 and util-linux)"
    exit 1
  fi
}
hosts_down() {
  net=$1
  shift
  RCC_NETNS_NET=$net "$scripts/netns-hosts.sh" down "$@" >/dev/null 2>&1
}
