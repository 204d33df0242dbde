# Activation of a wsp virtual environment for fish.
# Load it into the current shell with `source bin/activate.fish`; `deactivate` puts the shell
# back the way it was.

# Leave whichever environment is active first, whoever made it.
if functions -q deactivate
    deactivate
end

function deactivate --description 'Leave the virtual environment'
    if set -q _wsp_saved_path
        set -gx PATH $_wsp_saved_path
        set -e _wsp_saved_path
    end
    if set -q _wsp_saved_pythonhome
        set -gx PYTHONHOME $_wsp_saved_pythonhome
        set -e _wsp_saved_pythonhome
    end
    if functions -q _wsp_saved_fish_prompt
        functions -e fish_prompt
        functions -c _wsp_saved_fish_prompt fish_prompt
        functions -e _wsp_saved_fish_prompt
    end
    set -e VIRTUAL_ENV
    set -e VIRTUAL_ENV_PROMPT
    if test "$argv[1]" != nondestructive
        functions -e deactivate
    end
end

set -gx VIRTUAL_ENV __WSP_VIRTUAL_ENV__
set -gx VIRTUAL_ENV_PROMPT __WSP_PROMPT__

set -g _wsp_saved_path $PATH
set -gx PATH "$VIRTUAL_ENV/bin" $PATH

# PYTHONHOME would send the interpreter to another installation's standard library.
if set -q PYTHONHOME
    set -g _wsp_saved_pythonhome $PYTHONHOME
    set -e PYTHONHOME
end

if not set -q VIRTUAL_ENV_DISABLE_PROMPT
    if functions -q fish_prompt
        functions -c fish_prompt _wsp_saved_fish_prompt
    end
    function fish_prompt
        set -l last_status $status
        printf '(%s) ' $VIRTUAL_ENV_PROMPT
        if functions -q _wsp_saved_fish_prompt
            # Hand the saved prompt the status of the last command, as if we were not here.
            echo "exit $last_status" | source
            _wsp_saved_fish_prompt
        end
    end
end
