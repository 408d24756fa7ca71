#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The shell completions: completion/cgkill (bash), completion/_cgkill (zsh)
# and completion/cgkill.fish parse, offer exactly the options of
# cgkill --help (zsh and fish with a description each), and complete what
# follows them: signal names from cgkill -l, backends, unit names from
# systemctl list-units after --unit (system) and --user-unit (--user), and
# cgroups as paths into a cgroup mount or, with or without a leading slash,
# relative to the cgroup v2 mount found in /proc/self/mountinfo, as
# "systemctl show -P ControlGroup" prints them. Each completion runs in its
# shell: bash through bash-completion's helpers with COMP_WORDS, zsh on a
# pseudo-terminal (zpty) with compadd recording its matches, fish through
# complete -C. A stand-in systemctl on PATH lists the units; where the
# machine was booted with systemd, the real one is asked too. The cgroups
# completed are <v2 mount>/cgkill-test.<pid>.comp/..., made and removed here.
# The daemon's completions (completion/cgkilld, _cgkilld, cgkilld.fish)
# likewise offer exactly the options of cgkilld --help, and configuration
# files (*.conf, and directories) after --config and --check.
cd "${0%/*}/.." || exit 1
. tests/tap.sh
. tests/lib.sh

need_cgkill
tmp=$(mktemp -d /tmp/cgkill-test-completion.XXXXXX) || bail_out "mktemp"
box=""
cleanup() {
	[ -n "$box" ] && [ -d "$box" ] && find "$box" -depth -type d -exec rmdir {} + 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# --- what --help lists (as test-man.sh reads it) ------------------------
help=$("$CGKILL" --help) || bail_out "cgkill --help failed"
# Option lines: " -x, --long ...", "     --long ..." or " -x   ..." alone.
optlines=$(grep -E '^( -[[:alnum:]], --[a-z]|     --[a-z]| -[[:alnum:]]  )' <<<"$help")
help_long=$(grep -oE -- '--[a-z][a-z0-9-]*' <<<"$(cut -c1-30 <<<"$optlines")")
help_short=$(sed -n 's/^ \(-[[:alnum:]]\)\(,\|  \).*/\1/p' <<<"$optlines")
[ "$(wc -l <<<"$help_long")" -ge 10 ] && [ "$(wc -l <<<"$help_short")" -ge 5 ]
ok $? "--help lists options ($(wc -l <<<"$help_long") long, $(wc -l <<<"$help_short") short)"

# --- static checks ----------------------------------------------------------
check "completion/cgkill parses (bash -n)" bash -n completion/cgkill
if command -v zsh >/dev/null; then
	check "completion/_cgkill parses (zsh -n)" zsh -n completion/_cgkill
else
	skip "zsh is not installed (apt-get install zsh): completion/_cgkill not parsed"
fi
if command -v fish >/dev/null; then
	check "completion/cgkill.fish parses (fish -n)" fish -n completion/cgkill.fish
else
	skip "fish is not installed (apt-get install fish): completion/cgkill.fish not parsed"
fi
[ "$(head -n1 completion/_cgkill)" = "#compdef cgkill" ]
ok $? "completion/_cgkill starts with '#compdef cgkill'"
hard=$(grep -n '/sys/fs/cgroup' completion/cgkill completion/_cgkill completion/cgkill.fish)
[ -z "$hard" ]
ok $? "no completion hard-codes /sys/fs/cgroup" || diag "$hard"

# zsh: the option part of each _arguments spec (before its [description]).
specs=$(sed -n '/_arguments /,/&& ret=0/p' completion/_cgkill | grep -F '[')
zsh_names=$(sed 's/\[.*//' <<<"$specs" | grep -oE -- '--?[[:alnum:]][a-z0-9-]*')
same_set "long options" "cgkill --help" "$help_long" "completion/_cgkill (_arguments)" \
	"$(grep -- '^--' <<<"$zsh_names")"
same_set "short options" "cgkill --help" "$help_short" "completion/_cgkill (_arguments)" \
	"$(grep -E -- '^-[[:alnum:]]$' <<<"$zsh_names")"
nodesc=$(grep -vE "\[[^]]+\]" <<<"$specs")
[ -z "$nodesc" ]
ok $? "completion/_cgkill: every option has a description" || diag "$nodesc"
# fish: the -l and -s of each complete line.
fish_lines=$(grep -E '^complete -c cgkill .*-[ls] ' completion/cgkill.fish | grep -v -- ' -n ')
same_set "long options" "cgkill --help" "$help_long" "completion/cgkill.fish (complete -l)" \
	"$(grep -oE -- ' -l [a-z][a-z0-9-]*' <<<"$fish_lines" | sed 's/ -l /--/')"
same_set "short options" "cgkill --help" "$help_short" "completion/cgkill.fish (complete -s)" \
	"$(grep -oE -- ' -s [[:alnum:]]( |$)' <<<"$fish_lines" | sed 's/ -s \(.\).*/-\1/')"
nodesc=$(grep -v -- " -d '" <<<"$fish_lines")
[ -z "$nodesc" ]
ok $? "completion/cgkill.fish: every option has a description" || diag "$nodesc"

# --- the setting: a stand-in systemctl, sandbox cgroups ---------------------
mkdir "$tmp/bin"
cat >"$tmp/bin/systemctl" <<EOF2
#!/bin/sh
printf '%s\n' "\$*" >>"$tmp/systemctl.calls"
case " \$* " in
*" --user "*)
	printf '%s\n' 'cgkill-fake-u.service loaded active running User' \\
		'cgkill-fake-u.target loaded active active User target' ;;
*)
	printf '%s\n' 'cgkill-fake-a.service loaded active running A' \\
		'cgkill-fake-b.scope loaded active running B' \\
		'● cgkill-fake-c.service loaded failed failed C' \\
		'cgkill-fake.target loaded active active T' \\
		'cgkill-fake.timer loaded active waiting T' ;;
esac
EOF2
chmod +x "$tmp/bin/systemctl"
cp "$CGKILL" "$tmp/bin/cgkill"
PATH_FAKE=$tmp/bin:$PATH
v2=$(mount_of cgroup2)
rel=""
if [ -n "$v2" ] && [ "$(id -u)" -eq 0 ] && mkdir "$v2/cgkill-test.$$.comp" 2>/dev/null; then
	box=$v2/cgkill-test.$$.comp
	rel=cgkill-test.$$.comp
	mkdir "$box/child.service" "$box/child.service/sub" "$box/other.scope"
fi

# expect SHELL WHAT WANT ARGS...: the completion of the command line ARGS
# (its last word is completed; "" for an empty one) by SHELL's function
# $SHELL_comp gives the matches WANT (one a line, in any order).
expect() {
	local shell=$1 what=$2 want=$3 got
	shift 3
	got=$("${shell}_comp" "$@")
	# zsh adds the / of a directory and the , after a column as suffixes
	# that go if a separator is typed next: compare without them.
	if [ "$shell" = zsh ]; then
		got=$(sed 's|[/,]$||' <<<"$got")
		want=$(sed 's|[/,]$||' <<<"$want")
	fi
	got=$(sort -u <<<"$got")
	[ "$got" = "$(sort -u <<<"$want")" ]
	ok $? "$shell: $what" || diag "completing: $*" "got: $(echo $got)" "want: $(echo $want)"
}

# Everything that depends on completing in a shell.
functional() {
	local sh=$1 got
	got=$("${sh}_comp" cgkill - | grep -E -- '^-[[:alnum:]]$')
	[ "$sh" = bash ] || same_set "short options offered" "cgkill --help" "$help_short" "$sh" "$got"
	got=$("${sh}_comp" cgkill -- | sed 's/=$//')
	same_set "long options offered" "cgkill --help" "$help_long" "$sh" "$got"
	expect "$sh" "-s TER -> TERM" TERM cgkill -s TER
	expect "$sh" "-b v1 -> v1-freeze" v1-freeze cgkill -b v1
	expect "$sh" "--timeout 5s KI -> KILL" KILL cgkill --timeout 5s KI
	expect "$sh" "-o PID,S -> PID,STATE, a column from --help" PID,STATE cgkill -o PID,S
	rm -f "$tmp/systemctl.calls"
	expect "$sh" "--unit cgkill-fake: the units that can have a cgroup" \
		"$(printf '%s\n' cgkill-fake-a.service cgkill-fake-b.scope cgkill-fake-c.service)" \
		cgkill --unit cgkill-fake
	grep -q -- '--system list-units --all --plain --no-legend --no-pager' "$tmp/systemctl.calls" 2>/dev/null
	ok $? "$sh: --unit asks systemctl --system list-units --all --plain --no-legend --no-pager" ||
		diag "$(cat "$tmp/systemctl.calls" 2>/dev/null)"
	rm -f "$tmp/systemctl.calls"
	expect "$sh" "--user-unit cgkill-fake: the user's units" cgkill-fake-u.service \
		cgkill --user-unit cgkill-fake
	grep -q -- '--user list-units' "$tmp/systemctl.calls" 2>/dev/null
	ok $? "$sh: --user-unit asks systemctl --user list-units" ||
		diag "$(cat "$tmp/systemctl.calls" 2>/dev/null)"
	if [ -z "$box" ]; then
		skip "$sh: no cgroup v2 mount to create $rel in (or not root): cgroup paths not completed"
		return
	fi
	expect "$sh" "/$rel/ch -> /$rel/child.service/, relative to the v2 mount" \
		"/$rel/child.service/" cgkill "/$rel/ch"
	expect "$sh" "/$rel/ -> its two children" \
		"$(printf '%s\n' "/$rel/child.service/" "/$rel/other.scope/")" cgkill "/$rel/"
	expect "$sh" "/$rel/child.service/ -> .../sub/" "/$rel/child.service/sub/" \
		cgkill "/$rel/child.service/"
	expect "$sh" "$rel/ch -> $rel/child.service/ (no leading slash)" "$rel/child.service/" \
		cgkill "$rel/ch"
	got=$("${sh}_comp" cgkill "$v2/$rel/ch")
	grep -qx "$v2/$rel/child.service/\?" <<<"$got"
	ok $? "$sh: a path into the mount completes in the file system ($v2/$rel/ch)" ||
		diag "got: $got"
	got=$("${sh}_comp" cgkill "${v2:0:4}")
	grep -q "^${v2:0:4}" <<<"$got"
	ok $? "$sh: a path on the way to the mount (${v2:0:4}) completes in the file system" ||
		diag "got: $got"
	if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then
		expect "$sh" "--unit init.sc -> init.scope (the real systemctl)" init.scope \
			env PATH="$PATH" cgkill --unit init.sc
	else
		# Not a skip: the stand-in systemctl above covers it.
		note "$sh: not booted with systemd: --unit not completed from a real systemctl"
	fi
}

# --- bash -------------------------------------------------------------------
if [ -r /usr/share/bash-completion/bash_completion ]; then
	bash_comp() {
		local path=$PATH_FAKE
		if [ "$1" = env ]; then
			path=${2#PATH=}
			shift 2
		fi
		PATH=$path bash -c '
			. /usr/share/bash-completion/bash_completion
			. completion/cgkill
			. completion/cgkilld
			COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
			COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
			"_$1" "$1" "${COMP_WORDS[-1]}" "${COMP_WORDS[-2]}" 2>/dev/null
			printf "%s\n" "${COMPREPLY[@]}"' comp "$@"
	}
	functional bash
else
	skip "bash-completion is not installed: bash completion not run"
fi

# --- zsh --------------------------------------------------------------------
# An interactive zsh on a pseudo-terminal, compinit with completion/ first
# in fpath, and compadd wrapped to print each match it adds as it would be
# inserted; TAB at the end of the line, then the line is cleared.
cat >"$tmp/complete.zsh" <<'EOF2'
zmodload zsh/zpty || exit 2
zpty z zsh -f -i
zpty -w z "PS1='' RPS1=''; fpath=(${(q)1} \$fpath); autoload -Uz compinit; compinit -u -D"
# No listing, so no "do you wish to see all ... possibilities?" to answer.
zpty -w z 'unsetopt auto_list auto_menu list_beep beep; LISTMAX=100000'
zpty -w z 'compadd() {
  if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)* ]]; then builtin compadd "$@"; return; fi
  local -a __hits; local -A __o
  builtin compadd -A __hits "$@"
  zparseopts -E -A __o P: p: S: s: W: 2>/dev/null
  local h; for h in $__hits; do print -r -- "<<hit>>$IPREFIX${__o[-P]}${__o[-p]}$h${__o[-s]}${__o[-S]}"; done
  builtin compadd "$@"
}'
# The markers are split in what is typed, so that only the output of the
# command matches (the echo of the line does not).
# After the completion, a function prints a marker: nothing is typed before
# (zsh cuts a completion short when keys are waiting).
zpty -w z '__done() { print -r -- "<<comp""done>>" }; comppostfuncs=( __done )'
zpty -w z 'print -r -- "<<rea""dy>>"'
zpty -r z out '*<<ready>>*' || exit 3
zpty -w -n z "$2"$'\t'
zpty -r z out '*<<compdone>>*' || exit 3
hits=$out
zpty -w -n z $'\C-u'
zpty -w z 'print -r -- "<<do""ne>>"'
zpty -r z out '*<<done>>*' || exit 3
print -r -- "$hits" | tr -d '\r' | grep -ao '<<hit>>.*' | sed 's/^<<hit>>//'
zpty -d z
EOF2
if command -v zsh >/dev/null && zsh -fc 'zmodload zsh/zpty' 2>/dev/null; then
	zsh_comp() {
		local path=$PATH_FAKE
		if [ "$1" = env ]; then
			path=${2#PATH=}
			shift 2
		fi
		PATH=$path timeout 30 zsh -f "$tmp/complete.zsh" "$PWD/completion" "$*"
	}
	functional zsh
	expect zsh "-w -> -w<duration>" "$(printf -- '-w%s\n' 1s 5s 10s 30s 1min)" cgkill -w
	expect zsh "-l TE -> TERM" TERM cgkill -l TE
else
	skip "zsh (with zsh/zpty) is not installed: zsh completion not run"
fi

# --- fish -------------------------------------------------------------------
if command -v fish >/dev/null; then
	fish_comp() {
		local path=$PATH_FAKE
		if [ "$1" = env ]; then
			path=${2#PATH=}
			shift 2
		fi
		PATH=$path fish -N -c 'source completion/cgkill.fish; source completion/cgkilld.fish
			complete -C (string join " " -- $argv)' "$@" |
			cut -f1
	}
	functional fish
	nodesc=$(PATH=$PATH_FAKE fish -N -c 'source completion/cgkill.fish; complete -C "cgkill -"' | grep -v $'\t.')
	[ -z "$nodesc" ]
	ok $? "fish: every option offered has a description" || diag "$nodesc"
else
	skip "fish is not installed: fish completion not run"
fi

# --- cgkilld: completion/cgkilld (bash), _cgkilld (zsh), cgkilld.fish -----
CGKILLD=${CGKILLD:-$build/cgkilld}
[ -x "$CGKILLD" ] || bail_out "$CGKILLD not built (run make first)"
dhelp=$("$CGKILLD" --help) || bail_out "cgkilld --help failed"
# Option lines: "  -x, --long ..." or "      --long ...".
doptlines=$(grep -E '^ +--?[[:alnum:]]' <<<"$dhelp")
dhelp_long=$(grep -oE -- '--[a-z][a-z0-9-]*' <<<"$(cut -c1-22 <<<"$doptlines")")
dhelp_short=$(sed -n 's/^ *\(-[[:alnum:]]\), .*/\1/p' <<<"$doptlines")
[ "$(wc -l <<<"$dhelp_long")" -ge 5 ] && [ "$(wc -l <<<"$dhelp_short")" -ge 4 ]
ok $? "cgkilld --help lists options ($(wc -l <<<"$dhelp_long") long, $(wc -l <<<"$dhelp_short") short)"

check "completion/cgkilld parses (bash -n)" bash -n completion/cgkilld
if command -v zsh >/dev/null; then
	check "completion/_cgkilld parses (zsh -n)" zsh -n completion/_cgkilld
else
	skip "zsh is not installed (apt-get install zsh): completion/_cgkilld not parsed"
fi
if command -v fish >/dev/null; then
	check "completion/cgkilld.fish parses (fish -n)" fish -n completion/cgkilld.fish
else
	skip "fish is not installed (apt-get install fish): completion/cgkilld.fish not parsed"
fi
[ "$(head -n1 completion/_cgkilld)" = "#compdef cgkilld" ]
ok $? "completion/_cgkilld starts with '#compdef cgkilld'"
# bash: the words of compgen -W.
bash_words=$(sed -n "/compgen -W '/,/' --/p" completion/cgkilld | sed "s/.*compgen -W '//; s/' --.*//" |
	tr -s ' \t' '\n')
same_set "cgkilld long options" "cgkilld --help" "$dhelp_long" "completion/cgkilld (compgen -W)" \
	"$(grep -- '^--' <<<"$bash_words")"
same_set "cgkilld short options" "cgkilld --help" "$dhelp_short" "completion/cgkilld (compgen -W)" \
	"$(grep -E -- '^-[[:alnum:]]$' <<<"$bash_words")"

# --- cgkillctl: completion/cgkillctl (bash) ------------------------------
CGKILLCTL=${CGKILLCTL:-$build/cgkillctl}
[ -x "$CGKILLCTL" ] || bail_out "$CGKILLCTL not built (run make first)"
chelp=$("$CGKILLCTL" --help) || bail_out "cgkillctl --help failed"
coptlines=$(sed -n '/^Options:/,/^$/p' <<<"$chelp" | grep -E '^ +--?[[:alnum:]]')
chelp_long=$(grep -oE -- '--[a-z][a-z0-9-]*' <<<"$(cut -c1-22 <<<"$coptlines")")
chelp_short=$(sed -n 's/^ *\(-[[:alnum:]]\), .*/\1/p' <<<"$coptlines")
chelp_cmds=$(sed -n '/^Commands:/,/^$/p' <<<"$chelp" | sed -n 's/^  \([a-z][a-z]*\).*/\1/p')
check "completion/cgkillctl parses (bash -n)" bash -n completion/cgkillctl
ctl_words=$(sed -n "s/.*compgen -W '\([^']*\)' --.*/\1/p" completion/cgkillctl | tr -s ' \t' '\n')
same_set "cgkillctl long options" "cgkillctl --help" "$chelp_long" "completion/cgkillctl (compgen -W)" \
	"$(grep -- '^--' <<<"$ctl_words")"
same_set "cgkillctl short options" "cgkillctl --help" "$chelp_short" "completion/cgkillctl (compgen -W)" \
	"$(grep -E -- '^-[[:alnum:]]$' <<<"$ctl_words")"
same_set "cgkillctl commands" "cgkillctl --help" "$chelp_cmds" "completion/cgkillctl (compgen -W)" \
	"$(grep -- '^[a-z]' <<<"$ctl_words")"
specs=$(sed -n '/_arguments /,/&& ret=0/p' completion/_cgkilld | grep -F '[')
zsh_names=$(sed 's/\[.*//' <<<"$specs" | grep -oE -- '--?[[:alnum:]][a-z0-9-]*')
same_set "cgkilld long options" "cgkilld --help" "$dhelp_long" "completion/_cgkilld (_arguments)" \
	"$(grep -- '^--' <<<"$zsh_names")"
same_set "cgkilld short options" "cgkilld --help" "$dhelp_short" "completion/_cgkilld (_arguments)" \
	"$(grep -E -- '^-[[:alnum:]]$' <<<"$zsh_names")"
nodesc=$(grep -vE "\[[^]]+\]" <<<"$specs")
[ -z "$nodesc" ]
ok $? "completion/_cgkilld: every option has a description" || diag "$nodesc"
fish_lines=$(grep -E '^complete -c cgkilld .*-[ls] ' completion/cgkilld.fish | grep -v -- ' -n ')
same_set "cgkilld long options" "cgkilld --help" "$dhelp_long" "completion/cgkilld.fish (complete -l)" \
	"$(grep -oE -- ' -l [a-z][a-z0-9-]*' <<<"$fish_lines" | sed 's/ -l /--/')"
same_set "cgkilld short options" "cgkilld --help" "$dhelp_short" "completion/cgkilld.fish (complete -s)" \
	"$(grep -oE -- ' -s [[:alnum:]]( |$)' <<<"$fish_lines" | sed 's/ -s \(.\).*/-\1/')"
nodesc=$(grep -v -- " -d '" <<<"$fish_lines")
[ -z "$nodesc" ]
ok $? "completion/cgkilld.fish: every option has a description" || diag "$nodesc"
hard=$(grep -n '/sys/fs/cgroup' completion/cgkilld completion/_cgkilld completion/cgkilld.fish)
[ -z "$hard" ]
ok $? "no cgkilld completion hard-codes /sys/fs/cgroup" || diag "$hard"

# In each shell: the options, and configuration files after --config,
# -c and --check (a directory's trailing / aside: bash leaves it out).
conf=$tmp/conf
mkdir -p "$conf/rules.d"
touch "$conf/a.conf" "$conf/b.conf" "$conf/notes.txt"
dexpect() {
	local sh=$1 what=$2 want=$3 got
	shift 3
	got=$("${sh}_comp" "$@" | sed 's|/$||' | sort -u)
	[ "$got" = "$(sed 's|/$||' <<<"$want" | sort -u)" ]
	ok $? "$sh: cgkilld $what" || diag "completing: $*" "got: $(echo $got)" "want: $(echo $want)"
}
dfunctional() {
	local sh=$1 got
	got=$("${sh}_comp" cgkilld - | grep -E -- '^-[[:alnum:]]$')
	same_set "cgkilld: short options offered" "cgkilld --help" "$dhelp_short" "$sh" "$got"
	got=$("${sh}_comp" cgkilld -- | sed 's/=$//')
	same_set "cgkilld: long options offered" "cgkilld --help" "$dhelp_long" "$sh" "$got"
	dexpect "$sh" "--config <dir>/: the *.conf files and the directories" \
		"$(printf '%s\n' "$conf/a.conf" "$conf/b.conf" "$conf/rules.d")" cgkilld --config "$conf/"
	dexpect "$sh" "-c <dir>/a -> <dir>/a.conf" "$conf/a.conf" cgkilld -c "$conf/a"
	dexpect "$sh" "--check <dir>/b -> <dir>/b.conf" "$conf/b.conf" cgkilld --check "$conf/b"
	dexpect "$sh" "-v --config <dir>/n: no file but *.conf" "" cgkilld -v --config "$conf/n"
}
if declare -F bash_comp >/dev/null; then
	dfunctional bash
else
	skip "bash-completion is not installed: cgkilld's bash completion not run"
fi
if declare -F zsh_comp >/dev/null; then
	dfunctional zsh
else
	skip "zsh (with zsh/zpty) is not installed: cgkilld's zsh completion not run"
fi
if command -v fish >/dev/null; then
	dfunctional fish
	nodesc=$(fish -N -c 'source completion/cgkilld.fish; complete -C "cgkilld -"' | grep -v $'\t.')
	[ -z "$nodesc" ]
	ok $? "fish: every cgkilld option offered has a description" || diag "$nodesc"
else
	skip "fish is not installed: cgkilld's fish completion not run"
fi

done_testing
