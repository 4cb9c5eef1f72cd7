# shellcheck shell=sh
# Real OpenSSH for tests (tests/launchers/ssh_test.sh, tests/vm/two-guests.sh): keys made for one
# run, and configurations that use only them.
# ssh_test_setup DIR: DIR/host_key, DIR/user_key (authorized in DIR/authorized_keys) and
# DIR/sshd_config: root logs in with that key only, no PAM; give sshd -o ListenAddress=... and
# -o PidFile=... per instance. Fails when ssh-keygen does.
ssh_test_setup() {
  ssh-keygen -q -t ed25519 -N '' -f "$1/host_key" && ssh-keygen -q -t ed25519 -N '' -f "$1/user_key" || return 1
  cp "$1/user_key.pub" "$1/authorized_keys" && chmod 700 "$1" && chmod 600 "$1/authorized_keys" || return 1
  cat >"$1/sshd_config" <<CONF
Port 22
HostKey $1/host_key
AuthorizedKeysFile $1/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
AcceptEnv no
CONF
}
# ssh_test_client DIR HOST_PATTERN: an ssh_config block for HOST_PATTERN that logs in with DIR's
# user key, trusts any host key and never asks.
ssh_test_client() {
  cat <<CONF
Host $2
  IdentityFile $1/user_key
  StrictHostKeyChecking no
  UserKnownHostsFile /dev/null
  LogLevel ERROR
  BatchMode yes
CONF
}
