-- Pausing a job (`anarchon pause`, `anarchon resume`), shared by both formats' claim scripts: the
-- job hash records paused_at, paused_until (absent: until resumed) and resumed_at, all ms by the
-- server's clock. A pause refuses the claim of a new scheduled run while it lasts (now within it)
-- and, after it, of a slot that was due within it (a late or catch-up claim of a paused slot): the
-- runs it skipped are skipped, not missed. Runs in progress, their takeovers, and manual runs
-- (`run-now`) go on. Returns whether the slot is paused, and when the pause ends (nil: until
-- resumed).
local function paused(slot_ms, now, paused_at, paused_until, resumed_at)
  if not paused_at then return false, nil end
  local ends = paused_until
  if resumed_at and resumed_at >= paused_at and (not ends or resumed_at < ends) then ends = resumed_at end
  local function within(t) return t >= paused_at and (not ends or t < ends) end
  return within(now) or within(slot_ms), ends
end
