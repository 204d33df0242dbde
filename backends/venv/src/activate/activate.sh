# Activation of a wsp virtual environment for bash and zsh.
# Load it into the current shell with `source bin/activate` (running it as a program does
# nothing useful); `deactivate` puts the shell back the way it was.

# Leave whichever environment is active first, whoever made it.
if typeset -f deactivate >/dev/null 2>&1; then
    deactivate
fi

deactivate () {
    if [ -n "${_WSP_SAVED_PATH+set}" ]; then
        PATH="$_WSP_SAVED_PATH"
        export PATH
        unset _WSP_SAVED_PATH
    fi
    if [ -n "${_WSP_SAVED_PYTHONHOME+set}" ]; then
        PYTHONHOME="$_WSP_SAVED_PYTHONHOME"
        export PYTHONHOME
        unset _WSP_SAVED_PYTHONHOME
    fi
    if [ -n "${_WSP_SAVED_PS1+set}" ]; then
        PS1="$_WSP_SAVED_PS1"
        unset _WSP_SAVED_PS1
    fi
    unset VIRTUAL_ENV VIRTUAL_ENV_PROMPT
    # The shell may remember where it found commands while the environment was active.
    hash -r 2>/dev/null
    if [ "${1-}" != "nondestructive" ]; then
        unset -f deactivate
    fi
}

VIRTUAL_ENV=__WSP_VIRTUAL_ENV__
export VIRTUAL_ENV
VIRTUAL_ENV_PROMPT=__WSP_PROMPT__
export VIRTUAL_ENV_PROMPT

_WSP_SAVED_PATH="${PATH-}"
PATH="$VIRTUAL_ENV/bin${PATH:+:$PATH}"
export PATH

# PYTHONHOME would send the interpreter to another installation's standard library.
if [ -n "${PYTHONHOME+set}" ]; then
    _WSP_SAVED_PYTHONHOME="$PYTHONHOME"
    unset PYTHONHOME
fi

if [ -z "${VIRTUAL_ENV_DISABLE_PROMPT-}" ]; then
    _WSP_SAVED_PS1="${PS1-}"
    PS1=__WSP_PS1_PREFIX__"${PS1-}"
fi

hash -r 2>/dev/null
