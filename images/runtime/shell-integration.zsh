# Toolbox shell integration for zsh: FinalTerm / OSC 133 marks around every prompt and command, so
# the extension reads a shell as idle at its prompt and working while a command runs
# (extension/src/ui/agentState.ts; the marks: A before the prompt, C before a command runs, D;<exit>
# after it). Sourced from /etc/zsh/zshrc by the runtime image (images/runtime/Dockerfile).
#
# It only adds hooks (add-zsh-hook): the user's prompt, theme and their own hooks stay theirs. Only
# in an interactive shell writing to a terminal, once per shell, and not when
# TOOLBOX_SHELL_INTEGRATION=0.
[[ -o interactive && -t 1 && ${TERM:-} != dumb && ${TOOLBOX_SHELL_INTEGRATION:-1} != 0 ]] || return 0
(( ${+functions[__toolbox_si_precmd]} )) && return 0

typeset -gi __toolbox_si_ran=0

__toolbox_si_precmd() {
  local ret=$?
  if (( __toolbox_si_ran )); then
    builtin printf '\e]133;D;%s\a' "$ret"
    __toolbox_si_ran=0
  fi
  builtin printf '\e]133;A\a'
  return $ret
}

__toolbox_si_preexec() {
  __toolbox_si_ran=1
  builtin printf '\e]133;C\a'
}

autoload -Uz add-zsh-hook
# precmd first, so it reads the command's own exit status before other hooks run.
precmd_functions=(__toolbox_si_precmd ${precmd_functions[@]})
add-zsh-hook preexec __toolbox_si_preexec
