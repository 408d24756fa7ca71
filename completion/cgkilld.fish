# fish completion for cgkilld(8)
# SPDX-License-Identifier: GPL-2.0-or-later

# A configuration file: *.conf (cgkilld.conf(5)) and directories.
function __cgkilld_conf
    set -l tok (string replace -r -- '^(--config=|-c)' '' (commandline -ct))
    for f in $tok*
        if test -d $f
            printf '%s/\tdirectory\n' $f
        else if string match -q -- '*.conf' $f
            printf '%s\tconfiguration file\n' $f
        end
    end
end

complete -c cgkilld -f
complete -c cgkilld -s c -l config -x -a '(__cgkilld_conf)' -d 'Rules from a file and its .d/*.conf drop-ins'
complete -c cgkilld -l check -d 'Check the configuration (default: --config\'s) and exit'
complete -c cgkilld -n 'string match -q -- "--check" (commandline -opc)[-1]' -x -a '(__cgkilld_conf)'
complete -c cgkilld -s f -l foreground -d 'Do not detach'
complete -c cgkilld -l runtime-dir -x -a '(__fish_complete_directories)' -d 'The control socket and the pidfile in a directory'
complete -c cgkilld -s n -l dry-run -d 'Act on nothing: log what each rule would do'
complete -c cgkilld -s v -l verbose -d 'Debug messages too'
complete -c cgkilld -s h -l help -d 'Display help'
complete -c cgkilld -s V -l version -d 'Display version'
