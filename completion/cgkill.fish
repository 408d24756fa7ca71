# fish completion for cgkill(1)
# SPDX-License-Identifier: GPL-2.0-or-later

# Mount points of the cgroup file systems, from /proc/self/mountinfo (field
# 5; the file system type follows the " - " separator); with "2", the
# cgroup v2 mount only. Never a fixed path.
function __cgkill_mounts
    while read -l line
        set -l type (string split -m1 ' - ' -- $line)[2]
        set type (string split -m1 ' ' -- $type)[1]
        if test "$type" = cgroup2; or begin
                test "$type" = cgroup; and test "$argv[1]" != 2
            end
            echo (string split ' ' -- $line)[5]
            test "$argv[1]" = 2; and return
        end
    end </proc/self/mountinfo 2>/dev/null
end

function __cgkill_signals
    set -l cmd (commandline -opc)[1]
    set -l sigs (string split ' ' -- ($cmd -l 2>/dev/null))
    if test (count $sigs) -eq 0
        set sigs HUP INT QUIT ILL TRAP ABRT BUS FPE KILL USR1 SEGV USR2 PIPE ALRM TERM \
            STKFLT CHLD CONT STOP TSTP TTIN TTOU URG XCPU XFSZ VTALRM PROF WINCH IO PWR SYS
    end
    string match -v -- '' $sigs
end

# Columns for -o, from cgkill --help: a comma-separated list, with a "+"
# first to add to the default ones.
function __cgkill_columns
    set -l cmd (commandline -opc)[1]
    set -l tok (string replace -r -- '^(--output=|-o)' '' (commandline -ct))
    set -l prefix (string match -r -- '^.*,|^\+' $tok)
    set -l in 0
    $cmd --help 2>/dev/null | while read -l line
        if string match -q -- 'Available output columns*' $line
            set in 1
        else if test -z "$line"
            set in 0
        else if test $in = 1
            printf '%s%s\n' "$prefix" (string trim -- $line | string replace -r '  +' \t)
        end
    end
end

# Units that can have a cgroup, of the system manager or (--user) the user's.
function __cgkill_units
    systemctl $argv list-units --all --plain --no-legend --no-pager 2>/dev/null |
        string replace -r '^[●*] ' '' |
        string replace -r ' .*' '' |
        string match -r '.*\.(?:service|scope|slice|socket|mount|swap)$'
end

# A cgroup: a path into a cgroup mount, or a name relative to the cgroup v2
# mount with or without a leading slash, as /proc/PID/cgroup and
# "systemctl show -P ControlGroup" print it (/system.slice/foo.service).
function __cgkill_cgroups
    set -l cur (commandline -ct)
    set -l mounts (__cgkill_mounts)
    if string match -q -- '/*' $cur
        for m in $mounts
            if string match -q -- "$m/*" $cur
                __fish_complete_directories $cur 'cgroup path'
                return
            end
        end
        for m in $mounts
            if string match -q -- "$cur*" $m
                __fish_complete_directories $cur 'cgroup path'
                break
            end
        end
    end
    set -l mnt (__cgkill_mounts 2)
    test -n "$mnt"; or return
    set -l lead ''
    set -l rel $cur
    if string match -q -- '/*' $cur
        set lead /
        set rel (string sub -s 2 -- $cur)
    end
    for d in $mnt/$rel*/
        printf '%s%s\tcgroup\n' $lead (string replace -- "$mnt/" '' $d)
    end
end

complete -c cgkill -f
complete -c cgkill -a '(__cgkill_cgroups)'
complete -c cgkill -s s -l signal -x -a '(__cgkill_signals)' -d 'Signal to send'
complete -c cgkill -s b -l backend -x -a 'auto kernel freeze v1-freeze loop' -d 'Backend to use'
complete -c cgkill -s w -l wait -d 'Wait until the tree is empty [=duration, default 10s]'
complete -c cgkill -l no-wait -d 'Return once the signals are sent'
complete -c cgkill -l timeout -x -a '1s 5s 10s 30s 1min' -d 'After a duration, send a signal to what is left'
complete -c cgkill -n '__fish_seen_argument -l timeout; and string match -q -- "--timeout" (commandline -opc)[-2]' \
    -x -a '(__cgkill_signals)'
complete -c cgkill -l reap -d 'After SIGKILL, release the memory at once'
complete -c cgkill -l pid -x -a '(__fish_complete_pids)' -d 'Target the cgroup v2 that holds a process'
complete -c cgkill -l unit -x -a '(__cgkill_units --system)' -d 'Target the cgroup of a systemd unit'
complete -c cgkill -l user-unit -x -a '(__cgkill_units --user)' -d 'Target the cgroup of a unit of the user manager'
complete -c cgkill -s p -l print -d 'List what would be signalled, change nothing'
complete -c cgkill -s n -l dry-run -d 'Same as --print'
complete -c cgkill -s j -l json -d 'Write JSON to standard output'
complete -c cgkill -s J -d 'Same as --json'
complete -c cgkill -s o -l output -x -a '(__cgkill_columns)' -d 'The columns of the listings'
complete -c cgkill -l noheadings -d 'Listings without a heading line'
complete -c cgkill -s r -l raw -d 'Listings unaligned, values escaped'
complete -c cgkill -s f -l force -d 'Override the self, PID 1 and protected guards'
complete -c cgkill -s i -l interactive -d 'Ask before signalling'
complete -c cgkill -l protected -r -F -d 'Protected-cgroup list'
complete -c cgkill -l list-hierarchies -d 'Show the cgroup hierarchies and their backends'
complete -c cgkill -s l -l list -x -a '(__cgkill_signals)' -d 'List signal names, or convert one'
complete -c cgkill -s L -l table -d 'List signal names and numbers'
complete -c cgkill -s v -l verbose -d 'Report what is done and progress while waiting'
complete -c cgkill -s q -l quiet -d 'Print errors only'
complete -c cgkill -s h -l help -d 'Display help'
complete -c cgkill -s V -l version -d 'Display version'
