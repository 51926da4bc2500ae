/* bind_class.c: require "cudalab.class", classroom mode's Lua face: who the caller is, making a
 * class folder, opening one (a "cudalab.ClassDir" handle on its course, lessons and records,
 * with repl/class/classdir.c doing the filesystem work), and evaluating a class.lua in a sandbox.
 *
 * Stance: as with io.open, a refusal is an answer (nil and a message that says what is wrong and
 * what to do), bad arguments raise. What C hands out (a list of files, a text, the sandbox's
 * Lua state) is held by a "cudalab.ClassTemp" userdata made before it is asked for, so that an
 * error while it becomes Lua values (out of memory) leaves it to __gc, never leaked; each
 * function frees it as soon as it is done rather than wait for the collector.
 *
 * The sandbox is a Lua state of its own (lua_newstate with an allocator that counts), not an
 * environment table in the REPL's state: a class.lua written by a careless or hostile
 * instructor can then neither reach the REPL's globals and metatables nor run it out of
 * memory, and everything it made goes away with lua_close. What it returns crosses over as
 * plain data only. */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lualib.h>

#include "bindings.h"
#include "classdir.h"
#include "feedback.h"
#include "siphash.h"

#define CLASSDIR_MT "cudalab.ClassDir"
#define TEMP_MT "cudalab.ClassTemp"
#define SANDBOX_MEM ((size_t)4 << 20) /* bytes a class.lua may use */
#define SANDBOX_STEPS 10000000L      /* VM instructions it may run */
#define SANDBOX_HOOK_EVERY 1000      /* the count hook's period while under the limit */
#define COPY_DEPTH 8                 /* nesting of the returned tables, the outer one being 1 */
#define COPY_ENTRIES 10000           /* key-value pairs returned, in all tables together */

/* A class.lua's own Lua state and its accounts; the allocator's and the hook's user data. */
typedef struct sandbox {
  lua_State *S; /* NULL once closed */
  size_t used;  /* bytes it holds, at most SANDBOX_MEM */
  long steps;   /* instructions run, counted SANDBOX_HOOK_EVERY at a time */
  int too_long; /* it ran past SANDBOX_STEPS: from then on every instruction raises */
} sandbox;

/* What one call holds outside Lua until it has been turned into Lua values. */
typedef struct ctemp {
  classdir_list list; /* files from classdir_lessons or classdir_records */
  char *text;         /* a text from classdir_read_config or classdir_read_own_record */
  sandbox sb;         /* eval_config's state */
} ctemp;

static ctemp *temp_new(lua_State *L) {
  ctemp *t = lua_newuserdatauv(L, sizeof *t, 0);
  memset(t, 0, sizeof *t);
  luaL_setmetatable(L, TEMP_MT);
  return t;
}

static void temp_release(ctemp *t) {
  classdir_list_free(&t->list);
  free(t->text);
  t->text = NULL;
  if (t->sb.S) lua_close(t->sb.S);
  t->sb.S = NULL;
}

static int temp_gc(lua_State *L) {
  temp_release(luaL_checkudata(L, 1, TEMP_MT));
  return 0;
}

/* nil and msg: a refusal, as io.open gives one. */
static int fail(lua_State *L, const char *msg) {
  lua_pushnil(L);
  lua_pushstring(L, msg);
  return 2;
}

/* class.whoami() -> {uid, user, gid}: the Unix account running this process, from the kernel
 * and the passwd database; $USER is never asked, since anyone can set it. */
static int class_whoami(lua_State *L) {
  char name[128];
  uid_t uid = getuid();
  struct passwd *pw = getpwuid(uid);
  lua_createtable(L, 0, 3);
  bind_set_int(L, "uid", (lua_Integer)uid);
  classdir_user_name(uid, name, sizeof name);
  bind_set_str(L, "user", name);
  bind_set_int(L, "gid", (lua_Integer)(pw ? pw->pw_gid : getgid()));
  return 1;
}

/* class.init(dir, group_or_nil, class_lua_text) -> true | nil, why (classdir_init). */
static int class_init(lua_State *L) {
  const char *dir = luaL_checkstring(L, 1);
  const char *group = luaL_optstring(L, 2, NULL);
  size_t len;
  const char *text = luaL_checklstring(L, 3, &len);
  char msg[CLASSDIR_MSG];
  if (classdir_init(dir, group, text, len, msg, sizeof msg) != 0) return fail(L, msg);
  lua_pushboolean(L, 1);
  return 1;
}

/* class.open(dir) -> handle | nil, why. The handle is made closed, then opened, so a failure
 * leaves nothing for __gc but a closed handle. */
static int class_open(lua_State *L) {
  const char *dir = luaL_checkstring(L, 1);
  char msg[CLASSDIR_MSG];
  classdir *cd = lua_newuserdatauv(L, sizeof *cd, 0);
  classdir_clear(cd);
  luaL_setmetatable(L, CLASSDIR_MT);
  if (classdir_open(cd, dir, msg, sizeof msg) != 0) return fail(L, msg);
  return 1;
}

/* The open handle at argument 1; raises on a closed one, as io does on a closed file. */
static classdir *check_open(lua_State *L) {
  classdir *cd = luaL_checkudata(L, 1, CLASSDIR_MT);
  if (cd->dir < 0) luaL_error(L, "attempt to use a closed class folder");
  return cd;
}

/* h:close(), and __gc and __close: idempotent. */
static int cd_close(lua_State *L) {
  classdir_close(luaL_checkudata(L, 1, CLASSDIR_MT));
  return 0;
}

static int cd_tostring(lua_State *L) {
  classdir *cd = luaL_checkudata(L, 1, CLASSDIR_MT);
  if (cd->dir < 0) lua_pushliteral(L, CLASSDIR_MT " (closed)");
  else lua_pushfstring(L, CLASSDIR_MT " (%s)", cd->path);
  return 1;
}

/* h:info() -> {dir, owner_uid, owner, gid, group, restricted}. */
static int cd_info(lua_State *L) {
  classdir *cd = check_open(L);
  char name[128];
  lua_createtable(L, 0, 6);
  bind_set_str(L, "dir", cd->path);
  bind_set_int(L, "owner_uid", (lua_Integer)cd->owner);
  classdir_user_name(cd->owner, name, sizeof name);
  bind_set_str(L, "owner", name);
  bind_set_int(L, "gid", (lua_Integer)cd->gid);
  classdir_group_name(cd->gid, name, sizeof name);
  bind_set_str(L, "group", name);
  bind_set_bool(L, "restricted", cd->restricted);
  return 1;
}

/* h:read_config() -> text | nil, why. */
static int cd_read_config(lua_State *L) {
  classdir *cd = check_open(L);
  char msg[CLASSDIR_MSG];
  size_t len;
  ctemp *t = temp_new(L);
  if (classdir_read_config(cd, &t->text, &len, msg, sizeof msg) != 0) return fail(L, msg);
  lua_pushlstring(L, t->text, len);
  temp_release(t);
  return 1;
}

/* Appends the value on top of the stack to the sequence just below it. */
static void append(lua_State *L) {
  lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
}

/* h:lesson_files(path) -> {{name, text}...}, {warning...} | nil, why. */
static int cd_lesson_files(lua_State *L) {
  classdir *cd = check_open(L);
  const char *path = luaL_checkstring(L, 2);
  char msg[CLASSDIR_MSG];
  ctemp *t = temp_new(L);
  if (classdir_lessons(cd, path, &t->list, msg, sizeof msg) != 0) return fail(L, msg);
  lua_newtable(L);
  int files = lua_gettop(L);
  lua_newtable(L);
  int warnings = lua_gettop(L);
  for (size_t i = 0; i < t->list.n; i++) {
    classdir_file *f = &t->list.v[i];
    if (!f->text) {
      lua_pushstring(L, f->problem);
      lua_rawseti(L, warnings, (lua_Integer)lua_rawlen(L, warnings) + 1);
      continue;
    }
    lua_createtable(L, 0, 2);
    bind_set_str(L, "name", f->name);
    lua_pushlstring(L, f->text, f->len);
    lua_setfield(L, -2, "text");
    lua_rawseti(L, files, (lua_Integer)lua_rawlen(L, files) + 1);
  }
  temp_release(t);
  return 2;
}

/* h:write_record(text) -> true | nil, why. */
static int cd_write_record(lua_State *L) {
  classdir *cd = check_open(L);
  size_t len;
  const char *text = luaL_checklstring(L, 2, &len);
  char msg[CLASSDIR_MSG];
  if (classdir_write_record(cd, text, len, msg, sizeof msg) != 0) return fail(L, msg);
  lua_pushboolean(L, 1);
  return 1;
}

/* What a read of one of the class's files gives Lua: its text (rc 1), false when there is none
 * (rc 0), or nil and why (rc < 0); the buffer in t is released either way. */
static int push_read(lua_State *L, ctemp *t, int rc, size_t len, const char *msg) {
  if (rc < 0) return fail(L, msg);
  if (rc == 0) lua_pushboolean(L, 0);
  else lua_pushlstring(L, t->text, len);
  temp_release(t);
  return 1;
}

/* h:read_own_record() -> text | false (none yet) | nil, why. */
static int cd_read_own_record(lua_State *L) {
  classdir *cd = check_open(L);
  char msg[CLASSDIR_MSG];
  size_t len;
  ctemp *t = temp_new(L);
  int rc = classdir_read_own_record(cd, &t->text, &len, msg, sizeof msg);
  return push_read(L, t, rc, len, msg);
}

/* h:publish(uid, text) -> true | nil, why: uid's results, readable by them alone (feedback.h). */
static int cd_publish(lua_State *L) {
  classdir *cd = check_open(L);
  lua_Integer uid = luaL_checkinteger(L, 2);
  luaL_argcheck(L, uid >= 0 && uid < 0xffffffffLL, 2, "not a uid");
  size_t len;
  const char *text = luaL_checklstring(L, 3, &len);
  char msg[CLASSDIR_MSG];
  if (feedback_publish(cd, (uid_t)uid, text, len, msg, sizeof msg) != 0) return fail(L, msg);
  lua_pushboolean(L, 1);
  return 1;
}

/* h:read_feedback() -> text | false (none published) | nil, why: the caller's own results. */
static int cd_read_feedback(lua_State *L) {
  classdir *cd = check_open(L);
  char msg[CLASSDIR_MSG];
  size_t len;
  ctemp *t = temp_new(L);
  int rc = feedback_read(cd, &t->text, &len, msg, sizeof msg);
  return push_read(L, t, rc, len, msg);
}

/* Pushes the list of what classdir_records passed over: {total, empty, links, folders, special,
 * names, planted, older, owners = {name...}, more_owners}. */
static void push_skips(lua_State *L, const classdir_skips *k) {
  char name[128];
  lua_createtable(L, 0, 10);
  bind_set_int(L, "total", (lua_Integer)k->total);
  bind_set_int(L, "empty", (lua_Integer)k->empty);
  bind_set_int(L, "links", (lua_Integer)k->links);
  bind_set_int(L, "folders", (lua_Integer)k->folders);
  bind_set_int(L, "special", (lua_Integer)k->special);
  bind_set_int(L, "names", (lua_Integer)k->names);
  bind_set_int(L, "planted", (lua_Integer)k->planted);
  bind_set_int(L, "older", (lua_Integer)k->older);
  bind_set_bool(L, "more_owners", k->more_owners);
  lua_createtable(L, (int)k->nowners, 0);
  for (size_t i = 0; i < k->nowners; i++) {
    classdir_user_name(k->owners[i], name, sizeof name);
    lua_pushstring(L, name);
    append(L);
  }
  lua_setfield(L, -2, "owners");
}

/* h:records() -> {{uid, user, file, text} | {uid, user, file, problem [, planted, claimed,
 * claimed_user]} ...}, skipped | nil, why. The uid is the file's owner, never the one its name
 * claims; planted marks a file named as another uid's (claimed's) record. skipped counts what
 * was not a record (push_skips). */
static int cd_records(lua_State *L) {
  classdir *cd = check_open(L);
  char msg[CLASSDIR_MSG], name[128];
  classdir_skips skips;
  ctemp *t = temp_new(L);
  if (classdir_records(cd, &t->list, &skips, msg, sizeof msg) != 0) return fail(L, msg);
  lua_createtable(L, (int)(t->list.n < 100000 ? t->list.n : 100000), 0);
  for (size_t i = 0; i < t->list.n; i++) {
    classdir_file *f = &t->list.v[i];
    lua_createtable(L, 0, 4);
    bind_set_str(L, "file", f->name);
    bind_set_int(L, "uid", (lua_Integer)f->uid);
    classdir_user_name(f->uid, name, sizeof name);
    bind_set_str(L, "user", name);
    if (f->text) {
      lua_pushlstring(L, f->text, f->len);
      lua_setfield(L, -2, "text");
    } else {
      bind_set_str(L, "problem", f->problem);
    }
    if (f->planted) {
      bind_set_bool(L, "planted", 1);
      bind_set_int(L, "claimed", (lua_Integer)f->claimed);
      classdir_user_name(f->claimed, name, sizeof name);
      bind_set_str(L, "claimed_user", name);
    }
    append(L);
  }
  temp_release(t);
  push_skips(L, &skips);
  return 2;
}

/* h:readers() -> nil | {who, group, fix}: the accounts besides the instructor and the caller
 * that records/'s group lets read every record (classdir_readers), and the commands that fix
 * it. Asked at every report, grading and join, since a group can gain members at any time. */
static int cd_readers(lua_State *L) {
  classdir *cd = check_open(L);
  char who[512], fix[1024], group[128];
  if (classdir_readers(cd, who, sizeof who, fix, sizeof fix) == 0) {
    lua_pushnil(L);
    return 1;
  }
  classdir_group_name(cd->reader_gid, group, sizeof group);
  lua_createtable(L, 0, 3);
  bind_set_str(L, "who", who);
  bind_set_str(L, "group", group);
  bind_set_str(L, "fix", fix);
  return 1;
}

/* ---- the class.lua sandbox ---- */

/* The sandbox's allocator: realloc, refusing to hold more than SANDBOX_MEM. Lua turns a refusal
 * into a "not enough memory" error (after an emergency collection), which class.lua can catch
 * but never get past. A shrink never fails (Lua counts on that): the old block is kept. */
static void *sandbox_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  sandbox *sb = ud;
  size_t old = ptr ? osize : 0;
  if (nsize == 0) {
    free(ptr);
    sb->used -= old;
    return NULL;
  }
  if (nsize > old && nsize - old > SANDBOX_MEM - sb->used) return NULL;
  void *p = realloc(ptr, nsize);
  if (!p) return nsize <= old ? ptr : NULL;
  sb->used = sb->used - old + nsize;
  return p;
}

/* The count hook: past SANDBOX_STEPS it raises, and from then on at every instruction, so that
 * a pcall in class.lua that catches the error cannot keep the loop going (Redis does the same
 * for scripts). */
static void sandbox_hook(lua_State *S, lua_Debug *ar) {
  (void)ar;
  void *ud;
  lua_getallocf(S, &ud);
  sandbox *sb = ud;
  if (!sb->too_long) {
    sb->steps += SANDBOX_HOOK_EVERY;
    if (sb->steps < SANDBOX_STEPS) return;
    sb->too_long = 1;
    lua_sethook(S, sandbox_hook, LUA_MASKCOUNT, 1);
  }
  lua_pushliteral(S, "runs too long");
  lua_error(S);
}

/* string.rep without its one unbounded loop: Lua 5.4 copies an empty string n times, and
 * ("").rep(math.maxinteger) would run for ever inside C, out of the count hook's reach. */
static int sandbox_rep(lua_State *S) {
  size_t l, lsep;
  luaL_checklstring(S, 1, &l);
  lua_Integer n = luaL_checkinteger(S, 2);
  luaL_optlstring(S, 3, "", &lsep);
  if (n <= 0 || l + lsep == 0) {
    lua_pushliteral(S, "");
    return 1;
  }
  lua_pushvalue(S, lua_upvalueindex(1));
  lua_insert(S, 1);
  lua_call(S, lua_gettop(S) - 1, 1);
  return 1;
}

/* Opens what a class.lua may use, in protected mode (it allocates): the base functions that
 * touch nothing outside the state, string, math and table. Left out, with why:
 *  - load, loadfile, dofile, require: code from elsewhere, or bytecode that can crash Lua;
 *  - print, warn, collectgarbage: output in the learner's REPL, and control of the collector;
 *  - setmetatable, getmetatable: a __gc finalizer runs with hooks off (an endless loop in one
 *    would hang lua_close), and the string metatable is shared by every string;
 *  - xpcall: its message handler runs with hooks off when the error came from the count hook
 *    (Lua clears allowhook while a hook runs), so a handler that loops would never be stopped;
 *  - string.find, match, gmatch, gsub: the pattern matcher is C that the count hook cannot stop,
 *    and backtracks for hours on a crafted pattern; string.dump: bytecode;
 *  - table.move: a C loop over any range of indices, as long as it is told. */
static int sandbox_open(lua_State *S) {
  static const luaL_Reg libs[] = {{LUA_GNAME, luaopen_base}, {LUA_STRLIBNAME, luaopen_string},
                                  {LUA_MATHLIBNAME, luaopen_math},
                                  {LUA_TABLIBNAME, luaopen_table}, {NULL, NULL}};
  static const char *const no_base[] = {"load", "loadfile", "dofile", "require", "print",
                                        "warn", "collectgarbage", "setmetatable",
                                        "getmetatable", "xpcall", NULL};
  static const char *const no_string[] = {"find", "match", "gmatch", "gsub", "dump", NULL};
  for (const luaL_Reg *lib = libs; lib->name; lib++) {
    luaL_requiref(S, lib->name, lib->func, 1);
    lua_pop(S, 1);
  }
  for (const char *const *n = no_base; *n; n++) {
    lua_pushnil(S);
    lua_setglobal(S, *n);
  }
  lua_getglobal(S, LUA_STRLIBNAME);
  for (const char *const *n = no_string; *n; n++) {
    lua_pushnil(S);
    lua_setfield(S, -2, *n);
  }
  lua_getfield(S, -1, "rep");
  lua_pushcclosure(S, sandbox_rep, 1);
  lua_setfield(S, -2, "rep");
  lua_getglobal(S, LUA_TABLIBNAME);
  lua_pushnil(S);
  lua_setfield(S, -2, "move");
  lua_pop(S, 2);
  return 0;
}

/* Runs text (a text chunk, never bytecode) in S under the hook; its one result, or the error,
 * is left on top. Returns the status. Nothing here may raise in S unprotected: a state from
 * lua_newstate has no panic function but abort. */
static int sandbox_run(lua_State *S, const char *text, size_t len, const char *chunk) {
  lua_pushcfunction(S, sandbox_open);
  int status = lua_pcall(S, 0, 0, 0);
  if (status == LUA_OK) status = luaL_loadbufferx(S, text, len, chunk, "t");
  if (status == LUA_OK) {
    lua_sethook(S, sandbox_hook, LUA_MASKCOUNT, SANDBOX_HOOK_EVERY);
    status = lua_pcall(S, 0, 1, 0);
    lua_sethook(S, NULL, 0, 0);
  }
  return status;
}

/* Pushes onto L why the run failed: the limit it hit, or its message, which starts with the
 * chunk's name ("name:line:" as Lua puts it, or "name: " added to one without a position). An
 * error object that is not a string is not converted (that would run code in S). */
static void push_failure(lua_State *L, const sandbox *sb, int status, const char *name) {
  lua_State *S = sb->S;
  size_t len;
  const char *s = lua_type(S, -1) == LUA_TSTRING ? lua_tolstring(S, -1, &len) : NULL;
  if (sb->too_long) lua_pushfstring(L, "%s: runs too long (an endless loop?)", name);
  else if (status == LUA_ERRMEM ||
           (s && len >= 17 && strcmp(s + len - 17, "not enough memory") == 0))
    lua_pushfstring(L, "%s: uses more than 4 MiB of memory", name);
  else if (s && strncmp(s, name, strlen(name)) == 0 && s[strlen(name)] == ':')
    lua_pushlstring(L, s, len);
  else if (s) lua_pushfstring(L, "%s: %s", name, s);
  else lua_pushfstring(L, "%s: raised an error that is not a message (a %s)", name,
                       luaL_typename(S, -1));
}

/* Copies what class.lua returned from S into L as plain data. Reads of S here run unprotected,
 * so they are only those that never allocate: lua_next, lua_to* on values of the right type
 * (lua_tolstring on a number would convert it in place, allocating, and confuse lua_next);
 * errors in L may raise, leaving S to the ctemp's __gc. */
typedef struct copier {
  lua_State *S, *L;
  int entries;      /* key-value pairs copied so far */
  const char *name; /* the chunk's name, for messages */
  char path[160];   /* the key being copied, as Lua would write it: lessons[2].title */
  char err[512];    /* why the copy stopped */
} copier;

static int copy_table(copier *c, int depth);

/* Whether s (n bytes) can be written as a field name after a dot. */
static int is_name(const char *s, size_t n) {
  if (n == 0 || n > 40 || (s[0] >= '0' && s[0] <= '9')) return 0;
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
          (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
      return 0;
  return 1;
}

/* Pushes a copy of the key at -2 in S onto L and adds it to c->path after plen bytes. */
static int copy_key(copier *c, size_t plen) {
  lua_State *S = c->S;
  char *p = c->path + plen;
  size_t room = sizeof c->path - plen, n;
  const char *s;
  switch (lua_type(S, -2)) {
  case LUA_TSTRING:
    s = lua_tolstring(S, -2, &n);
    if (is_name(s, n)) snprintf(p, room, "%s%s", plen ? "." : "", s);
    else snprintf(p, room, "[\"%.*s%s\"]", (int)(n > 24 ? 24 : n), s, n > 24 ? "..." : "");
    lua_pushlstring(c->L, s, n);
    return 0;
  case LUA_TNUMBER:
    if (lua_isinteger(S, -2)) {
      snprintf(p, room, "[%lld]", (long long)lua_tointeger(S, -2));
      lua_pushinteger(c->L, lua_tointeger(S, -2));
    } else {
      snprintf(p, room, "[%.14g]", (double)lua_tonumber(S, -2));
      lua_pushnumber(c->L, lua_tonumber(S, -2));
    }
    return 0;
  case LUA_TBOOLEAN:
    snprintf(p, room, "[%s]", lua_toboolean(S, -2) ? "true" : "false");
    lua_pushboolean(c->L, lua_toboolean(S, -2));
    return 0;
  default:
    snprintf(c->err, sizeof c->err, "%s: a %s is used as a key in %s; keys must be strings, "
             "numbers or booleans", c->name, luaL_typename(S, -2), plen ? c->path : "the table");
    return -1;
  }
}

/* Pushes a copy of the value on top of S (at depth, the outer table being 1) onto L. */
static int copy_value(copier *c, int depth) {
  lua_State *S = c->S, *L = c->L;
  size_t n;
  const char *s;
  switch (lua_type(S, -1)) {
  case LUA_TSTRING:
    s = lua_tolstring(S, -1, &n);
    lua_pushlstring(L, s, n);
    return 0;
  case LUA_TNUMBER:
    if (lua_isinteger(S, -1)) lua_pushinteger(L, lua_tointeger(S, -1));
    else lua_pushnumber(L, lua_tonumber(S, -1));
    return 0;
  case LUA_TBOOLEAN:
    lua_pushboolean(L, lua_toboolean(S, -1));
    return 0;
  case LUA_TTABLE:
    return copy_table(c, depth + 1);
  default:
    snprintf(c->err, sizeof c->err, "%s: the value at %s is a %s; a class.lua may return only "
             "strings, numbers, booleans and tables", c->name, c->path, luaL_typename(S, -1));
    return -1;
  }
}

/* Pushes a copy of the table on top of S (at depth) onto L; a table nested too deep (one that
 * holds itself, say) or too many values in all stop the copy with c->err. */
static int copy_table(copier *c, int depth) {
  lua_State *S = c->S, *L = c->L;
  if (depth > COPY_DEPTH) {
    snprintf(c->err, sizeof c->err, "%s: tables nest deeper than %d levels at %s (a table "
             "that holds itself?)", c->name, COPY_DEPTH, c->path);
    return -1;
  }
  if (!lua_checkstack(S, 3)) {
    snprintf(c->err, sizeof c->err, "%s: out of memory reading what it returned", c->name);
    return -1;
  }
  luaL_checkstack(L, 4, "class.lua's tables");
  lua_newtable(L);
  size_t plen = strlen(c->path);
  lua_pushnil(S);
  while (lua_next(S, -2)) {
    if (++c->entries > COPY_ENTRIES) {
      snprintf(c->err, sizeof c->err, "%s: returns more than %d values", c->name, COPY_ENTRIES);
      lua_pop(S, 2);
      return -1;
    }
    if (copy_key(c, plen) != 0 || copy_value(c, depth) != 0) {
      lua_pop(S, 2);
      return -1;
    }
    lua_rawset(L, -3);
    lua_pop(S, 1);
    c->path[plen] = '\0';
  }
  return 0;
}

/* class.eval_config(text [, chunkname]) -> table | nil, why. Evaluates a class.lua in a Lua state
 * of its own, capped at SANDBOX_MEM bytes and SANDBOX_STEPS instructions, and returns a plain
 * copy of the table it returns. Messages keep the line: "class.lua:7: attempt to ...". */
static int class_eval_config(lua_State *L) {
  size_t len;
  const char *text = luaL_checklstring(L, 1, &len);
  const char *name = luaL_optstring(L, 2, "class.lua");
  const char *chunk = lua_pushfstring(L, "=%s", name);
  ctemp *t = temp_new(L);
  lua_State *S = t->sb.S = lua_newstate(sandbox_alloc, &t->sb);
  if (!S) return fail(L, lua_pushfstring(L, "%s: cannot make a Lua state for it", name));
  int status = sandbox_run(S, text, len, chunk);
  if (status != LUA_OK) {
    lua_pushnil(L);
    push_failure(L, &t->sb, status, name);
    temp_release(t);
    return 2;
  }
  if (lua_type(S, -1) != LUA_TTABLE) {
    lua_pushnil(L);
    lua_pushfstring(L, "%s must return a table (it returned %s)", name, luaL_typename(S, -1));
    temp_release(t);
    return 2;
  }
  copier c = {.S = S, .L = L, .name = name};
  int base = lua_gettop(L);
  if (copy_table(&c, 1) != 0) {
    lua_settop(L, base);
    temp_release(t);
    return fail(L, c.err);
  }
  temp_release(t);
  return 1;
}

/* class.siphash(key, message) -> 16 hex digits: SipHash-2-4 (repl/common/siphash.c) under a
 * 16-byte key. A class's snapshots seal each pass with it under a key of their own
 * (lua/class/class_snapshot.lua), so no learner can make a digest that matches. */
static int class_siphash(lua_State *L) {
  size_t klen, n;
  const char *key = luaL_checklstring(L, 1, &klen);
  const char *msg = luaL_checklstring(L, 2, &n);
  luaL_argcheck(L, klen == SIPHASH_KEY_BYTES, 1, "the key must be 16 bytes");
  char hex[17];
  snprintf(hex, sizeof hex, "%016llx",
           (unsigned long long)siphash24((const unsigned char *)key, msg, n));
  lua_pushstring(L, hex);
  return 1;
}

int luaopen_cudalab_class(lua_State *L) {
  static const luaL_Reg meta[] = {{"__gc", cd_close}, {"__close", cd_close},
                                  {"__tostring", cd_tostring}, {NULL, NULL}};
  static const luaL_Reg methods[] = {{"info", cd_info}, {"read_config", cd_read_config},
                                     {"lesson_files", cd_lesson_files},
                                     {"write_record", cd_write_record},
                                     {"read_own_record", cd_read_own_record},
                                     {"records", cd_records}, {"readers", cd_readers},
                                     {"publish", cd_publish},
                                     {"read_feedback", cd_read_feedback},
                                     {"close", cd_close},
                                     {NULL, NULL}};
  static const luaL_Reg funcs[] = {{"whoami", class_whoami}, {"init", class_init},
                                   {"open", class_open}, {"eval_config", class_eval_config},
                                   {"siphash", class_siphash}, {NULL, NULL}};
  if (luaL_newmetatable(L, CLASSDIR_MT)) {
    luaL_setfuncs(L, meta, 0);
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  if (luaL_newmetatable(L, TEMP_MT)) {
    lua_pushcfunction(L, temp_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
  luaL_newlib(L, funcs);
  return 1;
}
