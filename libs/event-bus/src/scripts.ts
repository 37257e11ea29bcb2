/**
 * The Lua scripts of the bus: each change to the stream, its filing by audience and its byte count
 * is one script, so that no reader or other publisher sees it half done.
 */

/** The field of an entry that holds the event's JSON. */
export const FIELD = 'e';
/** The field of an entry that names its audience (audienceOf). */
const AUDIENCE_FIELD = 'a';

/**
 * Lua shared by the scripts. `newer(a, b)`: stream id a after b. `drop(stream, entry, bytes)`:
 * deletes an entry, its filing under its audience (the audience's stream too once empty), and its
 * size from the byte count; returns the count.
 */
const COMMON = `
local function parts(id)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  return tonumber(ms), tonumber(seq)
end
local function newer(a, b)
  local am, as = parts(a)
  local bm, bs = parts(b)
  return am > bm or (am == bm and as > bs)
end
local function drop(stream, entry, bytes)
  local event, audience = '', nil
  for i = 1, #entry[2], 2 do
    if entry[2][i] == '${FIELD}' then event = entry[2][i + 1] end
    if entry[2][i] == '${AUDIENCE_FIELD}' then audience = entry[2][i + 1] end
  end
  redis.call('XDEL', stream, entry[1])
  if audience then
    local filed = stream .. ':audience:' .. audience
    redis.call('XDEL', filed, entry[1])
    if redis.call('XLEN', filed) == 0 then redis.call('DEL', filed) end
  end
  return redis.call('DECRBY', bytes, string.len(event))
end
`;

/**
 * KEYS: the stream, the event's key, its audience's stream, the byte count, the reader's byte
 * bound. ARGV: the event's JSON, how long its key is remembered, its audience, the publisher's
 * byte bound. Appends the event unless its key is remembered (then false), files it under its
 * audience by the same id, and drops the oldest events while the stream is over its bytes (never
 * the one just appended).
 */
export const PUBLISH = `${COMMON}
if not redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[2]) then return false end
local id = redis.call('XADD', KEYS[1], '*', '${FIELD}', ARGV[1], '${AUDIENCE_FIELD}', ARGV[3])
-- Ids only grow, and only this script files: this cannot fail short of an audience's stream
-- written by hand; then the event is still in the stream, and only a resume may miss it.
redis.pcall('XADD', KEYS[3], id, '${AUDIENCE_FIELD}', '')
local total = redis.call('INCRBY', KEYS[4], string.len(ARGV[1]))
local bound = tonumber(redis.call('GET', KEYS[5]) or ARGV[4])
while total > bound do
  local oldest = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', 1)[1]
  if oldest == nil or oldest[1] == id then break end
  total = drop(KEYS[1], oldest, KEYS[4])
end
return id`;

/**
 * KEYS: the stream, the byte count, the byte bound. ARGV: an id (now - keepMs), keepEvents,
 * keepBytes. Records keepBytes as the bound every publisher applies, then drops the events that
 * are both older than the id and not among the newest keepEvents. Returns how many went.
 */
export const TRIM = `${COMMON}
redis.call('SET', KEYS[3], ARGV[3])
local over = redis.call('XLEN', KEYS[1]) - tonumber(ARGV[2])
if over <= 0 then return 0 end
local oldest = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', over)
local dropped = 0
for _, entry in ipairs(oldest) do
  if not newer(ARGV[1], entry[1]) then break end
  drop(KEYS[1], entry, KEYS[2])
  dropped = dropped + 1
end
return dropped`;

/**
 * KEYS: the stream, then the audiences' streams to read (none: the stream itself). ARGV: the id,
 * the most events, the most bytes. Returns {'gap'}, or {'events', more (0 or 1), id, json, …}.
 */
export const AFTER = `${COMMON}
local after, max, budget = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
if not string.match(after, '^%d+%-%d+$') then return {'gap'} end
local last, dropped = '0-0', '0-0'
if redis.call('EXISTS', KEYS[1]) == 1 then
  local info = redis.call('XINFO', 'STREAM', KEYS[1])
  for i = 1, #info, 2 do
    if info[i] == 'last-generated-id' then last = info[i + 1] end
    if info[i] == 'max-deleted-entry-id' then dropped = info[i + 1] end
  end
end
if newer(after, last) or newer(dropped, after) then return {'gap'} end
local entries, more = {}, false
if #KEYS == 1 then
  entries = redis.call('XRANGE', KEYS[1], '(' .. after, '+', 'COUNT', max)
  more = #entries == max
else
  local ids = {}
  for k = 2, #KEYS do
    local filed = redis.call('XRANGE', KEYS[k], '(' .. after, '+', 'COUNT', max)
    if #filed == max then more = true end
    for _, entry in ipairs(filed) do table.insert(ids, entry[1]) end
  end
  table.sort(ids, function(a, b) return newer(b, a) end)
  if #ids > max then more = true end
  for i = 1, math.min(#ids, max) do
    local entry = redis.call('XRANGE', KEYS[1], ids[i], ids[i])[1]
    if entry then table.insert(entries, entry) end
  end
end
local out, used = {'events', 0}, 0
for _, entry in ipairs(entries) do
  local event = ''
  for i = 1, #entry[2], 2 do
    if entry[2][i] == '${FIELD}' then event = entry[2][i + 1] end
  end
  if #out > 2 and used + string.len(event) > budget then
    more = true
    break
  end
  used = used + string.len(event)
  table.insert(out, entry[1])
  table.insert(out, event)
end
if more then out[2] = 1 end
return out`;
