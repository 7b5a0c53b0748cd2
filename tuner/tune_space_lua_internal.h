/* The interpreter a space file runs in (tune_space_lua.c): the load's state, the sandbox and
 * the helpers Lua sees; built on tune_space_parse.c (space{}), tune_space_grid.c and
 * tune_space_values.c. Used only by tuner/tune_space*.c. */
#ifndef FT_TUNE_SPACE_LUA_INTERNAL_H
#define FT_TUNE_SPACE_LUA_INTERNAL_H

#include <stddef.h>

#include <lua.h>

#include "tune_space.h"

/* What the hooks last saw of the running file: the parent of a load run in a child process
 * (tune_space_bound.c) reads it from a shared page to say where a file that ran out of time was. */
typedef struct tune_seen {
    char src[TUNE_POS_LEN - 24];   /* the chunk's short source name, once it is loaded */
    int line;                   /* the last line a count or call hook saw (0: none yet) */
    volatile unsigned long progress;   /* counts hooks and candidates: still moving at the deadline, the
                                        * load was busy in Lua or enumerating, not stuck inside one C call */
} tune_seen;

/* One load's state; the Lua allocator's user data, so every helper can reach it. */
typedef struct tune_ctx {
    tune_device device;
    int smem_limit;             /* bytes, for gen_validate */
    size_t mem_used, mem_limit; /* bytes the interpreter holds, and its cap */
    long instructions;          /* the instruction budget, for messages */
    long ticks_left;            /* instruction-count hook events left before "ran too long" */
    int mem_spent;              /* 1 once an allocation was refused for the cap: from then on
                                 * every hook event fails, so pcall cannot swallow the limit */
    int track_lines;            /* 1 while the chunk runs: remember where it returns */
    int chunk_line;             /* the line the main chunk returned from (0: it did not) */
    char chunk_src[TUNE_POS_LEN - 24];   /* the chunk's short source name, as in Lua's messages */
    tune_seen *seen;            /* where the hooks write what they see; never NULL once open */
    const tune_captured *captured;   /* the problems to tune instead of the spaces' own, or NULL */
    tune_seen own_seen;         /* seen when no one else provides it */
} tune_ctx;

/* A fresh interpreter for ctx under lim's memory and instruction limits: the data libraries, the
 * helpers and `device`; NULL when out of memory. Close it with lua_close. */
lua_State *tune_lua_open(tune_ctx *ctx, const tune_space_limits *lim);
/* 1 once the file spent its memory or instruction budget (the load must fail), else 0; msg
 * then says which (no position). */
int tune_lua_spent(const tune_ctx *ctx, char *msg, size_t len);
tune_ctx *tune_lua_ctx(lua_State *L);
/* on: count instructions and remember the line the main chunk returns from; off: count only. */
void tune_lua_track_lines(lua_State *L, int on);
/* Pushes the `device` table made at open. */
void tune_lua_push_device(lua_State *L);
/* 1 when the value at idx is what skip() throws; *reason, its reason (valid while it is). */
int tune_lua_is_skip(lua_State *L, int idx, const char **reason);
/* "file:line" recorded by space{} for the table at idx, or NULL when space{} did not make it. */
const char *tune_lua_space_pos(lua_State *L, int idx);
/* Pushes the list of tables space{} declared, in call order. */
void tune_lua_push_declared(lua_State *L);

#endif
