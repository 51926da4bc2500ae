-- digests.lua: the bits of each corpus case's outputs (tests/corpus/corpus.lua), recorded
-- by make corpus-record on a GPU. None recorded yet.
return {
}
