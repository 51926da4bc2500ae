# tests/fuzz/fuzz.mk: included by the Makefile. Two targets:
#   make fuzz           random and hostile calls of the whole Lua API for FUZZ_SECONDS (default 60)
#                       under AddressSanitizer and UBSan together (build in build-fuzz/); ends with
#                       "fuzz: N calls, M crashes" and fails on any crash.
#   make valgrind-test  a representative subset of the tests under valgrind's memcheck: no error
#                       and no definite leak of our own (tools/valgrind.supp names what is not ours).
FUZZ_SECONDS ?= 60
FUZZ_BUILD   ?= build-fuzz
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer

.PHONY: fuzz valgrind-test
fuzz: deps
	@$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) SANITIZER= CFLAGS="$(FUZZ_SAN) $(CFLAGS)" \
	  LDFLAGS="$(FUZZ_SAN) $(LDFLAGS)" all
	@sh tests/fuzz/run.sh $(FUZZ_BUILD)/cudalab $(FUZZ_SECONDS)

valgrind-test: deps
	@$(MAKE) --no-print-directory all
	@sh tests/fuzz/valgrind.sh $(BUILD)/cudalab
