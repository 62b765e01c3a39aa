package main

import (
	"io"
	"regexp"
	"strings"

	"github.com/cgcat/cgcat/local"
	"github.com/spf13/cobra"
)

type initOptions struct {
	cmd string
}

// initShells are the shells `cgcat init` writes a hook for.
var initShells = []string{"bash", "zsh", "fish"}

func newInitCommand() *cobra.Command {
	o := &initOptions{}
	cmd := &cobra.Command{
		Use:   "init bash|zsh|fish",
		Short: "Print a shell hook that adds a jump command (cgcd NAME), like zoxide's",
		Long: `Print shell code that adds a command to jump into a project: ` + "`cgcd order-sdk`" + ` runs
cd "$(cgcat path order-sdk)". When the name stands for no single project and fzf is
installed, fzf offers the matching projects (every project for ` + "`cgcd`" + ` alone); without fzf
the candidates are listed. ` + "`cgcd -`" + ` goes back, and a directory that exists is entered as cd
would. --cmd names the command.

  bash  eval "$(cgcat init bash)"                  # in ~/.bashrc
  zsh   eval "$(cgcat init zsh)"                   # in ~/.zshrc
  fish  cgcat init fish | source                   # in ~/.config/fish/config.fish`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: initShells,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runInit(o, args[0], cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&o.cmd, "cmd", "cgcd", "the name of the jump command")
	return cmd
}

// shellName is a name a shell function can have (and that needs no
// quoting anywhere it is written).
var shellName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`)

func runInit(o *initOptions, shell string, out io.Writer) error {
	if !shellName.MatchString(o.cmd) {
		return usagef("--cmd %q: write a plain command name (letters, digits, - and _)", local.Printable(o.cmd))
	}
	var hook string
	switch shell {
	case "bash", "zsh":
		hook = posixHook
	case "fish":
		hook = fishHook
	default:
		return usagef("unknown shell %q: write bash, zsh or fish", local.Printable(shell))
	}
	_, err := io.WriteString(out, strings.ReplaceAll(hook, "__CMD__", o.cmd))
	return err
}

// posixHook is the bash and zsh hook. The fzf lines read the records of
// `cgcat projects` in a pipe (NAME, PATH, ID, AVAILABILITY) and take the
// id, whose exact path `cgcat path` prints (a record escapes control
// characters; the path it prints does not).
const posixHook = `# cgcat shell hook: ` + "`__CMD__ NAME`" + ` enters the project NAME stands for.
__CMD__() {
  local __cgcat_dir __cgcat_id
  if [ "$#" -eq 1 ] && [ "$1" = "-" ]; then
    cd - || return
    return
  fi
  if [ "$#" -eq 1 ] && [ -d "$1" ]; then
    cd -- "$1" || return
    return
  fi
  if [ "$#" -gt 0 ] && __cgcat_dir="$(command cgcat path -- "$@" 2>/dev/null)"; then
    cd -- "$__cgcat_dir" || return
    return
  fi
  if command -v fzf >/dev/null 2>&1 && [ -t 0 ] && [ -t 2 ]; then
    __cgcat_id="$(command cgcat projects -- "$@" | command fzf --delimiter='	' --with-nth=1,2 --select-1 --exit-0 --prompt='__CMD__> ' | command cut -f3)"
    [ -n "$__cgcat_id" ] || return 1
    __cgcat_dir="$(command cgcat path -- "$__cgcat_id")" || return
    cd -- "$__cgcat_dir" || return
    return
  fi
  if [ "$#" -eq 0 ]; then
    command cgcat projects
    return 1
  fi
  command cgcat path -- "$@" >/dev/null
}
`

// fishHook is the same command for fish.
const fishHook = `# cgcat shell hook: ` + "`__CMD__ NAME`" + ` enters the project NAME stands for.
function __CMD__
    if test (count $argv) -eq 1; and test "$argv[1]" = "-"
        cd -
        return
    end
    if test (count $argv) -eq 1; and test -d "$argv[1]"
        cd -- "$argv[1]"
        return
    end
    if test (count $argv) -gt 0
        set -l dir (command cgcat path -- $argv 2>/dev/null)
        and begin
            cd -- "$dir"
            return
        end
    end
    if command -q fzf; and isatty stdin; and isatty stderr
        set -l id (command cgcat projects -- $argv | command fzf --delimiter=\t --with-nth=1,2 --select-1 --exit-0 --prompt='__CMD__> ' | command cut -f3)
        test -n "$id"; or return 1
        set -l dir (command cgcat path -- "$id"); or return
        cd -- "$dir"
        return
    end
    if test (count $argv) -eq 0
        command cgcat projects
        return 1
    end
    command cgcat path -- $argv >/dev/null
end
`
