#!/bin/bash
# The second guest of tests/vm/two-guests.sh: runs an sshd on its link address, so the first
# guest's rccrun starts ranks here as it would on any host (rccrun -H ... over ssh), says so in
# DIR/ready.HOST, and serves until DIR/stop appears. Usage: guest-serve-ssh.sh DIR
dir=${1:?usage: guest-serve-ssh.sh DIR}
host=$(hostname)
mkdir -p /run/sshd && chmod 0755 /run/sshd
/usr/sbin/sshd -f "$dir/sshd_config" -o "ListenAddress=${RCC_VM_LINK_IP:?no link}" -o "PidFile=/run/sshd.pid" \
	-E "$dir/sshd.$host.log" || { echo "guest-serve-ssh: sshd did not start on $host" >&2; exit 1; }
touch "$dir/ready.$host"
while [ ! -e "$dir/stop" ]; do sleep 0.2; done
kill "$(cat /run/sshd.pid)" 2>/dev/null
exit 0
