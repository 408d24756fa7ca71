#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkill --unit and --user-unit: the unit is resolved to its cgroup by
# "systemctl show", run without a shell, with a clean environment and a
# bounded wait, before anything is signalled.
#
# First against a stand-in systemctl on PATH (any machine): the arguments
# and the environment it gets, each answer and failure it can give, and a
# kill of the sandbox cgroup it names (<v2 mount>/cgkill-test.<pid>.units).
# Then, where the machine was booted with systemd, against the real service
# manager: transient units cgkill-test-<pid>-<n> made here with systemd-run
# (and stopped at the end) are killed by name, with a sibling unit and a
# process of the test as sentinels. Nothing else is ever signalled.
cd "${0%/*}/.." || exit 1
. tests/tap.sh
. tests/lib.sh

need_cgkill
[ "$(id -u)" -eq 0 ] || skip_all "needs root (cgroup sandboxes, systemd-run)"

# The cgroup v2 mount, from mountinfo (field 5; the type follows " - ").
v2=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") break; if ($(i + 1) == "cgroup2") { print $5; exit } }' \
	/proc/self/mountinfo)
[ -n "$v2" ] || skip_all "no cgroup v2 mount"
# Names as /proc/PID/cgroup shows them are relative to the root of our
# cgroup namespace; the mount must show that root.
v2root=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") break; if ($(i + 1) == "cgroup2") { print $4; exit } }' \
	/proc/self/mountinfo)
[ "$v2root" = / ] || skip_all "the cgroup v2 mount shows $v2root, not the root"

tmp=$(mktemp -d /tmp/cgkill-test-units.XXXXXX) || bail_out "mktemp"
box=$v2/cgkill-test.$$.units
rel=/cgkill-test.$$.units
units=()
pids=()

cleanup() {
	local pid u
	for u in "${units[@]}"; do
		systemctl stop "$u" >/dev/null 2>&1
		systemctl reset-failed "$u" >/dev/null 2>&1
	done
	if [ -d "$box" ]; then
		rm_cgroup_tree "$box"
	fi
	for pid in "${pids[@]}"; do
		kill -KILL "$pid" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 129' HUP INT TERM

mkdir "$box" || bail_out "cannot create $box"

# A sleeper in the cgroup $1 (relative to the box); its pid in $sleeper.
sleeper=""
spawn() {
	mkdir -p "$box/$1" || return 1
	sh -c 'echo $$ >"$1/cgroup.procs" && exec sleep 300' sh "$box/$1" &
	disown
	sleeper=$!
	pids+=("$sleeper")
	for _ in $(seq 100); do
		grep -qx "$sleeper" "$box/$1/cgroup.procs" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

alive() {
	kill -0 "$1" 2>/dev/null && [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" != Z ]
}

# Wait (bounded) until pid $1 is gone.
gone() {
	for _ in $(seq 100); do
		alive "$1" || return 0
		sleep 0.05
	done
	return 1
}

# run ARGS...: cgkill with stdout in $out, stderr in $err, status in $rc.
run() {
	out=$("$CGKILL" "$@" 2>"$tmp/err")
	rc=$?
	err=$(cat "$tmp/err")
}

# --- a stand-in systemctl ---------------------------------------------------
# It writes its arguments and environment to $tmp/args and $tmp/env, then
# behaves as $tmp/mode says.
mkdir "$tmp/bin" "$tmp/empty"
cat >"$tmp/bin/systemctl" <<EOF
#!/bin/sh
echo \$\$ >"$tmp/pid"
printf '%s\n' "\$@" >"$tmp/args"
env >"$tmp/env"
case \$(cat "$tmp/mode") in
answer) cat "$tmp/answer" ;;
empty) echo ;;
nobus) echo "Failed to connect to bus: No such file or directory" >&2; exit 1 ;;
fail) echo "Unit name foo is not valid." >&2; echo "second line" >&2; exit 1 ;;
hang) exec sleep 60 ;;
esac
EOF
chmod +x "$tmp/bin/systemctl"
# cgkill runs /usr/bin/systemctl (or /bin/systemctl), never one found on
# PATH (tests/test-unit-path.sh): the stand-in is bound over those in a
# mount namespace of each run's own.
[ -x /usr/bin/systemctl ] || [ -x /bin/systemctl ] ||
	skip_all "no systemctl in /usr/bin or /bin for the stand-in to cover"
command -v unshare >/dev/null || skip_all "unshare (util-linux) not installed"
# standin FILE COMMAND...: COMMAND where FILE is every systemctl cgkill may run.
standin() {
	unshare -m --propagation private sh -c 'f=$1; shift
		for p in /usr/bin/systemctl /bin/systemctl; do
			[ ! -e "$p" ] || mount --bind "$f" "$p" || exit 99
		done
		exec "$@"' sh "$@"
}
fake() {
	echo "$1" >"$tmp/mode"
	rm -f "$tmp/args" "$tmp/env"
}
# cgkill with the stand-in first on PATH, a user bus to find, and one
# variable of its own that must not reach systemctl.
frun() {
	out=$(standin "$tmp/bin/systemctl" env PATH="$tmp/bin:$PATH" XDG_RUNTIME_DIR="$tmp" \
		CGKILL_TEST_LEAK=1 "$CGKILL" "$@" 2>"$tmp/err")
	rc=$?
	err=$(cat "$tmp/err")
}

spawn T0 && t0=$sleeper && spawn S && sibling=$sleeper && spawn . && parent=$sleeper
ok $? "sandbox $box with sleepers in T0, S and itself" || bail_out "cannot set up the sandbox"

fake answer
echo "$rel/T0" >"$tmp/answer"
frun --user-unit app
[ $rc -eq 0 ] && gone "$t0"
ok $? "--user-unit app: the cgroup systemctl names is killed, exit 0" || diag "rc $rc: $err"
alive "$sibling" && alive "$parent"
ok $? "--user-unit app: the sleepers in the sibling and the parent live"
[ "$(cat "$tmp/args" 2>/dev/null | tr '\n' ' ')" = \
	"--user show --no-pager --property=ControlGroup --value -- app.service " ]
ok $? "systemctl --user show ... -- app.service: the name gets .service" ||
	diag "args: $(cat "$tmp/args" 2>/dev/null | tr '\n' ' ')"
grep -qx "XDG_RUNTIME_DIR=$tmp" "$tmp/env" && grep -qx LC_ALL=C "$tmp/env" &&
	! grep -q CGKILL_TEST_LEAK "$tmp/env"
ok $? "systemctl gets a clean environment: XDG_RUNTIME_DIR, LC_ALL=C, nothing of ours" ||
	diag "$(cat "$tmp/env" 2>/dev/null)"
[ "$(grep -vcE '^(PATH|LC_ALL|XDG_RUNTIME_DIR|DBUS_SESSION_BUS_ADDRESS|PWD|SHLVL|_)=' "$tmp/env")" -eq 0 ]
ok $? "systemctl gets no other variable" || diag "$(cat "$tmp/env")"

# Names: a unit type is kept, anything else gets .service, as systemctl does.
for pair in foo.scope:foo.scope foo@bar:foo@bar.service foo@bar.socket:foo@bar.socket \
	foo.bar:foo.bar.service app.slice:app.slice; do
	fake empty
	frun --user-unit "${pair%%:*}"
	[ "$(tail -n1 "$tmp/args" 2>/dev/null)" = "${pair#*:}" ]
	ok $? "--user-unit ${pair%%:*} asks for ${pair#*:}" || diag "$(cat "$tmp/args" 2>/dev/null)"
done

# --unit asks the system manager (where there is one; else it says so).
fake empty
frun --unit app
if [ -d /run/systemd/system ]; then
	[ "$(head -n1 "$tmp/args" 2>/dev/null)" = --system ]
	ok $? "--unit runs systemctl --system show ..." || diag "$(cat "$tmp/args" 2>/dev/null)"
	! grep -q XDG_RUNTIME_DIR "$tmp/env"
	ok $? "--unit: systemctl does not get XDG_RUNTIME_DIR"
else
	[ $rc -eq 1 ] && [ "$err" = "cgkill: --unit app: no systemd service manager here" ] &&
		[ ! -e "$tmp/args" ]
	ok $? "not booted with systemd: --unit app: exit 1, 'no systemd service manager here'" ||
		diag "rc $rc: $err"
	# examples/graceful-stop.sh hands a unit name to cgkill --unit.
	out=$(env PATH="$tmp/bin:$PATH" CGKILL="$CGKILL" examples/graceful-stop.sh app.service 2>&1)
	rc=$?
	[ $rc -eq 1 ] && [ "$out" = "cgkill: --unit app.service: no systemd service manager here" ]
	ok $? "graceful-stop.sh app.service: cgkill --unit answers (exit 1)" || diag "rc $rc: $out"
fi

# What systemctl may answer, and what cgkill says.
spawn T1 && t1=$sleeper
ok $? "a sleeper in T1"
fake empty
frun --user-unit gone
[ $rc -eq 1 ] && [ "$err" = "cgkill: --user-unit gone.service: the unit has no cgroup (not running?)" ]
ok $? "no ControlGroup: exit 1, 'the unit has no cgroup (not running?)'" || diag "rc $rc: $err"
# Resolved first: the cgroup argument before it is not touched.
frun "$box/T1" --user-unit gone
[ $rc -eq 1 ] && alive "$t1"
ok $? "a unit that cannot be resolved stops the run before anything is signalled" ||
	diag "rc $rc: $err"
fake nobus
frun --user-unit app
[ $rc -eq 1 ] && [ "$err" = "cgkill: --user-unit app: no systemd user service manager here (systemctl: Failed to connect to bus: No such file or directory)" ]
ok $? "no user manager: exit 1, 'no systemd user service manager here (systemctl: ...)'" ||
	diag "rc $rc: $err"
fake fail
frun --user-unit app
[ $rc -eq 1 ] && [ "$err" = "cgkill: --user-unit app.service: systemctl failed (exit status 1): Unit name foo is not valid." ]
ok $? "systemctl fails: exit 1 and its first line of error" || diag "rc $rc: $err"
fake answer
printf 'system.slice/x\n' >"$tmp/answer"
frun --user-unit app
[ $rc -eq 1 ] && grep -q "unexpected answer from systemctl: system.slice/x" <<<"$err"
ok $? "an answer that is no cgroup name: exit 1, 'unexpected answer'" || diag "rc $rc: $err"
printf '/a\n/b\n' >"$tmp/answer"
frun --user-unit app
[ $rc -eq 1 ] && grep -q "unexpected answer from systemctl" <<<"$err"
ok $? "an answer of two lines: exit 1, 'unexpected answer'" || diag "rc $rc: $err"
printf '/\033[31m\n' >"$tmp/answer"
frun --user-unit app
[ $rc -eq 1 ] && grep -q 'unexpected answer\|no such\|ENOENT' <<<"$err" && ! grep -q $'\033' <<<"$err"
ok $? "an answer with an escape sequence is not echoed raw" || diag "rc $rc: $(cat -v <<<"$err")"
fake hang
start=$(date +%s)
frun --user-unit app
secs=$(($(date +%s) - start))
[ $rc -eq 1 ] && grep -q "systemctl did not answer within 10 s" <<<"$err" && [ $secs -le 15 ]
ok $? "a systemctl that hangs is killed after 10 s: exit 1 (${secs} s)" || diag "rc $rc: $err"
! alive "$(cat "$tmp/pid")"
ok $? "the hanging systemctl is gone"

# Several units and cgroups in one run; -p lists, kills nothing.
spawn T2 && t2=$sleeper
fake answer
echo "$rel/T1" >"$tmp/answer"
frun -p --user-unit one
[ $rc -eq 0 ] && grep -qw "$t1" <<<"$out" && alive "$t1"
ok $? "-p --user-unit: lists the unit's process, signals nothing" || diag "rc $rc: $out $err"
frun --user-unit one "$box/T2"
[ $rc -eq 0 ] && gone "$t1" && gone "$t2"
ok $? "--user-unit with a cgroup argument: both are killed" || diag "rc $rc: $err"
alive "$sibling" && alive "$parent"
ok $? "the sentinels in S and the parent still live"

# No systemctl, no user bus, a bad name.
: >"$tmp/noexec"
out=$(standin "$tmp/noexec" env PATH="$tmp/empty" XDG_RUNTIME_DIR="$tmp" "$CGKILL" --user-unit app 2>&1)
rc=$?
[ $rc -eq 1 ] && [ "$out" = "cgkill: --user-unit app: no systemd user service manager here (no systemctl in /usr/bin or /bin)" ]
ok $? "no systemctl: exit 1, 'no systemd user service manager here'" || diag "rc $rc: $out"
out=$(env -u XDG_RUNTIME_DIR -u DBUS_SESSION_BUS_ADDRESS PATH="$tmp/bin:$PATH" \
	"$CGKILL" --user-unit app 2>&1)
rc=$?
[ $rc -eq 1 ] && grep -q "^cgkill: --user-unit app: no systemd user service manager here (neither XDG_RUNTIME_DIR nor DBUS_SESSION_BUS_ADDRESS is set)$" <<<"$out"
ok $? "no XDG_RUNTIME_DIR: exit 1 and why" || diag "rc $rc: $out"
for bad in "a b" "a/b" "" "a*" "$(printf 'a\033b')"; do
	out=$(PATH="$tmp/bin:$PATH" "$CGKILL" --unit "$bad" 2>&1)
	rc=$?
	[ $rc -eq 2 ] && grep -q "^cgkill: --unit: invalid unit name" <<<"$out" && ! grep -q $'\033' <<<"$out"
	ok $? "--unit '$(cat -v <<<"$bad")': exit 2, invalid unit name" || diag "rc $rc: $out"
done

# --- the real systemctl ---------------------------------------------------
if command -v systemctl >/dev/null; then
	# A user manager nobody runs: an empty runtime directory.
	mkdir -m 700 "$tmp/xdg"
	out=$(env -u DBUS_SESSION_BUS_ADDRESS XDG_RUNTIME_DIR="$tmp/xdg" "$CGKILL" --user-unit app 2>&1)
	rc=$?
	[ $rc -eq 1 ] && grep -q "^cgkill: --user-unit app: no systemd user service manager here (systemctl: " <<<"$out"
	ok $? "systemctl --user with no user manager: exit 1, 'no systemd user service manager here'" ||
		diag "rc $rc: $out"
else
	skip "systemctl is not installed"
fi

# Not a skip: the logic above ran against a stand-in systemctl; a machine
# not booted with systemd (CI's kind) has no service manager to ask.
if [ ! -d /run/systemd/system ] || ! command -v systemd-run >/dev/null; then
	note "not booted with systemd: --unit against a real service manager not run here"
	done_testing
	exit
fi

# A transient unit of ours with three processes; its cgroup's pids.
n=0
unit=""
upids=()
start_unit() {
	local cg
	unit=cgkill-test-$$-$((++n))
	units+=("$unit.service")
	systemd-run --quiet --collect --unit="$unit" --property=DefaultDependencies=no \
		sh -c 'sleep 300 & sleep 300 & exec sleep 300' || return 1
	for _ in $(seq 100); do
		cg=$(systemctl show --property=ControlGroup --value "$unit.service")
		if [ -n "$cg" ] && [ "$(wc -l <"$v2$cg/cgroup.procs" 2>/dev/null)" -eq 3 ]; then
			mapfile -t upids <"$v2$cg/cgroup.procs"
			return 0
		fi
		sleep 0.05
	done
	return 1
}

start_unit
ok $? "systemd-run --unit=$unit: three processes" || bail_out "cannot start a transient unit"
victim=$unit victims=("${upids[@]}")
start_unit
ok $? "systemd-run --unit=$unit, the sibling sentinel"
sentinel_unit=$unit sentinel_pids=("${upids[@]}")
sleep 300 &
own=$!
pids+=("$own")

run -p --unit "$victim"
[ $rc -eq 0 ] && [ "$(grep -cw sleep <<<"$out")" -eq 3 ] && alive "${victims[0]}"
ok $? "cgkill -p --unit $victim lists its 3 processes" || diag "rc $rc: $out $err"
run --unit "$victim"
[ $rc -eq 0 ]
ok $? "cgkill --unit $victim: exit 0" || diag "rc $rc: $err"
dead=0
for p in "${victims[@]}"; do
	gone "$p" && dead=$((dead + 1))
done
[ $dead -eq 3 ]
ok $? "its processes are gone ($dead of 3)"
all=0
for p in "${sentinel_pids[@]}"; do
	alive "$p" && all=$((all + 1))
done
[ $all -eq 3 ] && [ "$(systemctl is-active "$sentinel_unit.service")" = active ]
ok $? "the sibling unit $sentinel_unit is untouched"
alive "$own"
ok $? "a process of the test itself lives"

# examples/graceful-stop.sh with a unit name: cgkill --unit does the rest.
start_unit
ok $? "systemd-run --unit=$unit, for graceful-stop.sh"
out=$(CGKILL=$CGKILL examples/graceful-stop.sh -n "$unit.service" 2>&1)
rc=$?
[ $rc -eq 0 ] && [ "$(grep -cw sleep <<<"$out")" -eq 3 ] && alive "${upids[0]}"
ok $? "graceful-stop.sh -n $unit.service lists its processes" || diag "rc $rc: $out"
out=$(CGKILL=$CGKILL examples/graceful-stop.sh -t 1s "$unit.service" 2>&1)
rc=$?
dead=0
for p in "${upids[@]}"; do
	gone "$p" && dead=$((dead + 1))
done
[ $rc -eq 0 ] && [ $dead -eq 3 ]
ok $? "graceful-stop.sh -t 1s $unit.service: exit 0, its processes gone ($dead of 3)" ||
	diag "rc $rc: $out"

run --unit "cgkill-test-$$-none"
[ $rc -eq 1 ] && [ "$err" = "cgkill: --unit cgkill-test-$$-none.service: the unit has no cgroup (not running?)" ]
ok $? "--unit of a unit that does not exist: exit 1, 'the unit has no cgroup (not running?)'" ||
	diag "rc $rc: $err"
run --unit "$sentinel_unit.service" --unit "cgkill-test-$$-none"
[ $rc -eq 1 ] && [ "$(systemctl is-active "$sentinel_unit.service")" = active ]
ok $? "with a unit that does not exist, the unit before it is not touched" || diag "rc $rc: $err"
cg=$(systemctl show --property=ControlGroup --value "$sentinel_unit.service")
run -j --unit "$sentinel_unit"
[ $rc -eq 0 ] && grep -qF "\"$v2$cg\"" <<<"$out"
ok $? "cgkill -j --unit $sentinel_unit: exit 0, the report names $v2$cg" || diag "rc $rc: $out $err"
for p in "${sentinel_pids[@]}"; do
	gone "$p" || break
done
! alive "${sentinel_pids[0]}"
ok $? "and its processes are gone"

done_testing
