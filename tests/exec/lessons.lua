-- lessons.lua: every lesson in lessons/ run end to end by lessons.verify: each step's examples,
-- each task's wrong answer (which must fail its check) and reference solution (which must pass
-- it). make test runs it on the simulator, make test-gpu on the GPU. One "ok - lesson NN-name"
-- line per lesson; a lesson that needs a part of cudalab this build lacks is reported as
-- "ok - lesson NN-name # SKIP why", a skip that neither passes nor fails.
-- LESSONS=first-last verifies the lessons numbered so (tests/run.sh runs it in parts).
local range = os.getenv("LESSONS")
local first, last = (range or ""):match("^(%d+)%-(%d+)$")
assert(not range or first, "LESSONS: first-last, as 1-8, not " .. tostring(range))
local ok = require("lessons").verify(nil, {from = tonumber(first), to = tonumber(last)})
io.stdout:flush()
os.exit(ok and 0 or 1)
