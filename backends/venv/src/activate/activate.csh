# Activation of a wsp virtual environment for csh and tcsh.
# Load it into the current shell with `source bin/activate.csh`; `deactivate` puts the shell
# back the way it was.

# Leave whichever environment is active first, whoever made it.
if (`alias deactivate | wc -c` > 0) then
    deactivate
endif

# csh substitutes variables on a whole line before it runs any of it, so everything the
# alias reads is defined for as long as the environment is active.
alias deactivate 'setenv PATH "$_wsp_saved_path"; if ($_wsp_had_pythonhome) setenv PYTHONHOME "$_wsp_saved_pythonhome"; if ($_wsp_had_prompt) set prompt="$_wsp_saved_prompt"; unset _wsp_saved_path _wsp_had_pythonhome _wsp_saved_pythonhome _wsp_had_prompt _wsp_saved_prompt; unsetenv VIRTUAL_ENV; unsetenv VIRTUAL_ENV_PROMPT; rehash; unalias deactivate'

setenv VIRTUAL_ENV __WSP_VIRTUAL_ENV__
setenv VIRTUAL_ENV_PROMPT __WSP_PROMPT__

set _wsp_saved_path="$PATH"
setenv PATH "${VIRTUAL_ENV}/bin:${PATH}"

# PYTHONHOME would send the interpreter to another installation's standard library.
set _wsp_had_pythonhome=0
set _wsp_saved_pythonhome=""
if ($?PYTHONHOME) then
    set _wsp_had_pythonhome=1
    set _wsp_saved_pythonhome="$PYTHONHOME"
    unsetenv PYTHONHOME
endif

set _wsp_had_prompt=0
set _wsp_saved_prompt=""
if (! $?VIRTUAL_ENV_DISABLE_PROMPT) then
    if ($?prompt) then
        set _wsp_had_prompt=1
        set _wsp_saved_prompt="$prompt"
        set prompt=__WSP_PS1_PREFIX__"$prompt"
    endif
endif

rehash
