-- lessons.lua: every lesson in lessons/ run end to end by lessons.verify: each step's examples,
-- each task's wrong answer (which must fail its check) and reference solution (which must pass
-- it). make test runs it on the simulator, make test-gpu on the GPU. One "ok - lesson NN-name"
-- line per lesson; a lesson that needs a part of cudalab this build lacks is reported as
-- "ok - lesson NN-name # SKIP why", a skip that neither passes nor fails.
local ok = require("lessons").verify()
io.stdout:flush()
os.exit(ok and 0 or 1)
