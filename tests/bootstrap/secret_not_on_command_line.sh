#!/bin/sh
# The job secret never on a command line: rccrun starts two "remote" ranks through a stand-in rsh
# that records its arguments (what ps shows, here and on the remote host) and runs the command
# string in a clean environment. Each rank prints its RCC_JOB_SECRET; it must be the 32-hex
# secret, and appear nowhere in the recorded command lines. Rank 0 still gets rccrun's stdin.
#   secret_not_on_command_line.sh RCCRUN
set -u
rccrun=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/rsh" <<'RSH'
#!/bin/sh
echo "$*" >> "$(dirname "$0")/argv"
host=$1
shift
exec env -i PATH=/usr/local/bin:/usr/bin:/bin sh -c "$*"
RSH
chmod +x "$dir/rsh"
out=$(echo from-stdin | "$rccrun" -H nodeA:1,nodeB:1 --rsh "$dir/rsh" --tag-output \
  sh -c 'echo "secret=$RCC_JOB_SECRET"; if [ "$RCC_RANK" = 0 ]; then read line; echo "stdin=$line"; fi') || {
  echo "FAIL: rccrun failed: $out"; exit 1; }
secrets=$(echo "$out" | sed -n 's/.*secret=//p' | sort -u)
[ "$(echo "$secrets" | wc -l)" = 1 ] && echo "$secrets" | grep -Eq '^[0-9a-f]{32}$' || {
  echo "FAIL: ranks did not get one 32-hex secret: $out"; exit 1; }
if grep -q "$secrets" "$dir/argv"; then echo "FAIL: the secret is on the rsh command line:"; cat "$dir/argv"; exit 1; fi
echo "$out" | grep -q 'stdin=from-stdin' || { echo "FAIL: rank 0 did not get rccrun's stdin: $out"; exit 1; }
echo "PASS: secret delivered on stdin, not on $(wc -l < "$dir/argv") rsh command lines"
