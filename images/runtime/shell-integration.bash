# Toolbox shell integration for bash: FinalTerm / OSC 133 marks around every prompt and command, so
# the extension reads a shell as idle at its prompt and working while a command runs
# (extension/src/ui/agentState.ts; the marks: A before the prompt, C before a command runs, D;<exit>
# after it). Sourced from /etc/bash.bashrc by the runtime image (images/runtime/Dockerfile).
#
# It adds to PROMPT_COMMAND (first, so it reads the command's exit status) and PS0 (bash 4.4+,
# expanded in the shell itself after a command line is read): the user's PS1 stays theirs. Only in
# an interactive shell writing to a terminal, once per shell, and not when
# TOOLBOX_SHELL_INTEGRATION=0. A ~/.bashrc that sets PROMPT_COMMAND or PS0 outright drops the marks.
case $- in *i*) ;; *) return 0 ;; esac
[ -t 1 ] && [ "${TERM:-}" != dumb ] && [ "${TOOLBOX_SHELL_INTEGRATION:-1}" != 0 ] || return 0
[ -n "${__toolbox_si:-}" ] && return 0
__toolbox_si=1
__toolbox_si_ran=0
# Empty: its subscript in PS0 is an arithmetic assignment that marks "a command ran", and expands to nothing.
__toolbox_si_none=()

__toolbox_si_prompt() {
  local ret=$?
  if [ "$__toolbox_si_ran" = 1 ]; then
    builtin printf '\e]133;D;%s\a' "$ret"
    __toolbox_si_ran=0
  fi
  builtin printf '\e]133;A\a'
  return $ret
}

if [[ "$(declare -p PROMPT_COMMAND 2>/dev/null)" == "declare -a"* ]]; then
  PROMPT_COMMAND=(__toolbox_si_prompt "${PROMPT_COMMAND[@]}")
else
  PROMPT_COMMAND="__toolbox_si_prompt${PROMPT_COMMAND:+; $PROMPT_COMMAND}"
fi
PS0="${PS0:-}"'${__toolbox_si_none[__toolbox_si_ran=1]}\e]133;C\a'
