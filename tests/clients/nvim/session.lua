-- One full WSP session against `wsp serve`, driven by Neovim's own JSON-RPC client,
-- vim.lsp.rpc, unmodified.
--
-- Usage (the script runs from --cmd, before Neovim would open the arguments as files):
--   nvim --headless -u NONE -i NONE -n --noplugin --cmd 'luafile session.lua' -- WSP_BINARY serve --state-dir DIR
-- Exits 0 only if every answer is right; otherwise prints each wrong answer and exits 1.

local DEADLINE_MS = 120000
local CLIENT = 'nvim-' .. tostring(vim.version().major) .. '.' .. tostring(vim.version().minor)
local SESSION_METHODS = {
  'environment/create',
  'environment/delete',
  'environment/execute',
  'environment/get',
  'initialize',
  'shutdown',
}

local function say(text)
  io.stderr:write(text .. '\n')
end

local function finish(status)
  io.stderr:flush()
  vim.cmd('cquit ' .. tostring(status))
end

local failures = {}
local function check(condition, what, actual)
  if not condition then
    table.insert(failures, what .. '; got ' .. vim.inspect(actual))
  end
  return condition
end

local function is_null(value)
  return value == nil or value == vim.NIL
end

local function server_command()
  local argv = vim.v.argv
  for i, word in ipairs(argv) do
    if word == '--' then
      return { unpack(argv, i + 1) }
    end
  end
  return {}
end

local exited = nil
local dispatchers = {
  on_exit = function(code, signal)
    exited = { code = code, signal = signal }
  end,
  on_error = function(kind, err)
    table.insert(failures, 'rpc client error ' .. tostring(kind) .. ': ' .. vim.inspect(err))
  end,
}

-- vim.lsp.rpc.start's signature changed in Neovim 0.10: (cmd_list, dispatchers) replaced
-- (cmd, cmd_args, dispatchers).
local function start(command)
  local rpc = require('vim.lsp.rpc')
  if vim.fn.has('nvim-0.10') == 1 then
    return rpc.start(command, dispatchers)
  end
  return rpc.start(command[1], { unpack(command, 2) }, dispatchers)
end

local client

-- Sends one request and waits for its answer; returns (err, result).
local function call(method, params)
  local answered, err, result = false, nil, nil
  local sent = client.request(method, params, function(e, r)
    answered, err, result = true, e, r
  end)
  if not sent then
    error('the client could not send ' .. method)
  end
  if not vim.wait(DEADLINE_MS, function()
    return answered or exited ~= nil
  end, 10) then
    error('no answer to ' .. method .. ' within ' .. DEADLINE_MS .. ' ms')
  end
  if not answered then
    error('the server exited before answering ' .. method .. ': ' .. vim.inspect(exited))
  end
  return err, result
end

-- A request that must succeed: returns its result, or nil after recording the error.
local function result_of(method, params)
  local err, result = call(method, params)
  if not check(is_null(err), method .. ': succeeds', err) then
    return nil
  end
  return result
end

local function session()
  local capabilities = result_of('initialize', { client_name = CLIENT, client_protocol_version = '0.1.0' })
  if not capabilities then
    return
  end
  check(capabilities.protocol_version == '0.1.0', 'initialize: protocol_version is 0.1.0', capabilities)
  local methods = capabilities.methods
  if check(type(methods) == 'table' and vim.tbl_islist(methods), 'initialize: methods is an array', capabilities) then
    for _, method in ipairs(SESSION_METHODS) do
      check(vim.tbl_contains(methods, method), 'initialize: methods lists ' .. method, methods)
    end
    local sorted = vim.deepcopy(methods)
    table.sort(sorted)
    check(vim.deep_equal(sorted, methods), 'initialize: methods are sorted', methods)
  end

  local name = CLIENT .. '-session'
  local created = result_of('environment/create', { name = name, python_version = '3.12' })
  if not created then
    return
  end
  local id = created.id
  if not check(type(id) == 'string' and id:match('^env%-%x+$') and #id == 16 and id == id:lower(),
    'create: id is env- and 12 hex digits', created) then
    return
  end
  check(created.name == name, 'create: name echoed', created)
  check(created.python_version == '3.12', 'create: python_version echoed as asked', created)
  check(type(created.interpreter_path) == 'string' and created.interpreter_path:sub(1, 1) == '/',
    'create: interpreter_path is absolute', created)
  check(type(created.installed_packages) == 'table', 'create: installed_packages is an array', created)
  local extra = type(created.extra) == 'table' and created.extra or {}
  check(type(extra.backend) == 'string' and type(extra.path) == 'string', 'create: extra has backend and path', created)
  check(type(extra.python_full_version) == 'string' and vim.startswith(extra.python_full_version, '3.12.'),
    'create: extra.python_full_version is 3.12.*', created)

  local ran = result_of('environment/execute', { id = id, argv = { 'python', '-c', 'print(6*7)' } })
  if ran then
    check(ran.exit_code == 0, 'execute: exit_code is 0', ran)
    check(ran.stdout == '42\n', 'execute: stdout is 42', ran)
    check(ran.stderr == '', 'execute: stderr is empty', ran)
  end

  local details = result_of('environment/get', { id = id })
  if details then
    check(details.id == id, 'get: id echoed', details)
    check(details.name == name, 'get: name as created', details)
    check(details.python_version == '3.12', 'get: python_version as created', details)
    check(details.interpreter_path == created.interpreter_path, 'get: interpreter_path as created', details)
    local packages_ok = type(details.installed_packages) == 'table'
    for _, package in ipairs(packages_ok and details.installed_packages or {}) do
      packages_ok = packages_ok and type(package.name) == 'string' and type(package.version) == 'string'
    end
    check(packages_ok, 'get: installed_packages are {name, version}', details)
    check(type(details.extra) == 'table' and details.extra.path == extra.path, 'get: extra.path as created', details)
  end

  local ack = result_of('environment/delete', { id = id })
  check(type(ack) == 'table' and ack.id == id, 'delete: acknowledges the id', ack)

  local gone_err, gone = call('environment/get', { id = id })
  if check(not is_null(gone_err), 'get after delete: an error', gone) then
    check(gone_err.code == -31001, 'get after delete: error -31001', gone_err)
    check(type(gone_err.data) == 'table' and gone_err.data.id == id, 'get after delete: error data names the id', gone_err)
  end

  local stop_err, stopped = call('shutdown', nil)
  check(is_null(stop_err) and is_null(stopped), 'shutdown: result is null', { err = stop_err, result = stopped })
end

local command = server_command()
if #command == 0 then
  say("usage: nvim --headless -u NONE --cmd 'luafile session.lua' -- WSP_BINARY serve [server args]")
  finish(2)
end

client = start(command)
if not client then
  say('FAIL the rpc client could not start ' .. vim.inspect(command))
  finish(1)
end

local ok, problem = pcall(session)
if not ok then
  table.insert(failures, 'session failed: ' .. tostring(problem))
end
if exited == nil then
  client.notify('exit')
  vim.wait(DEADLINE_MS, function()
    return exited ~= nil
  end, 10)
end
check(exited ~= nil and exited.code == 0 and exited.signal == 0, 'exit: the server exits with status 0', exited)
if exited == nil then
  if client.terminate then
    client.terminate()
  else
    vim.loop.kill(client.pid, 'sigkill')
  end
end

if #failures > 0 then
  for _, failure in ipairs(failures) do
    say('FAIL ' .. failure)
  end
  finish(1)
end
say(CLIENT .. ' session: every answer is right')
finish(0)
