-- submission_headers.lua: the learner's own headers a submission's kernel files include
-- (#include "twice.h"), read from the lesson's folder of their workspace when a check passes, so
-- that the class record carries them and grading compiles the kernels as the prompt did.
-- classroom.lua calls it; grading writes the files back beside the kernels (grade_worker.lua).
--
-- Design stance: only what the kernels name, and only files of the workspace's folder. A
-- header is found with the preprocessor's own reading of the text (cudalab.sandbox's
-- own_headers: comments, strings and splices as NVRTC reads them), by a plain name (a path or a
-- toolkit header is no file of the learner's), through the headers it includes in turn; it is
-- read without following a symbolic link, and only a regular file no larger than one file of a
-- record may hold. The kernel files keep their places: headers fill only what the record's
-- count of files leaves.

local M = {}

-- add(files, dir, limits) -> files and the headers: files ({name = text}, the kernel files
-- edited) with each header they include that dir holds, through nested includes, at most
-- limits.files files in all and limits.file bytes each. A header that cannot be read (missing,
-- a link, too large) is left out: grading then says the compiler cannot find it.
function M.add(files, dir, limits)
  local guard, fs = require "cudalab.sandbox", require "cudalab.files"
  local out, count, queue = {}, 0, {}
  local names = {}
  for name in pairs(files or {}) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    out[name], count = files[name], count + 1
    queue[#queue + 1] = files[name]
  end
  local i = 1
  while i <= #queue and count < limits.files do
    for _, name in ipairs(guard.own_headers(queue[i]) or {}) do
      if out[name] == nil and count < limits.files then
        local text = fs.read(dir .. "/" .. name, limits.file, true)
        if text then
          out[name], count = text, count + 1
          queue[#queue + 1] = text
        end
      end
    end
    i = i + 1
  end
  return out
end

return M
