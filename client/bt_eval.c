/*
 * Copyright (c) 2026 The userdt authors
 *
 * Permission to use, copy, modify, and distribute this software for any
 * purpose with or without fee is hereby granted, provided that the above
 * copyright notice and this permission notice appear in all copies.
 *
 * THE SOFTWARE IS PROVIDED "AS IS" AND THE AUTHOR DISCLAIMS ALL WARRANTIES
 * WITH REGARD TO THIS SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF
 * MERCHANTABILITY AND FITNESS. IN NO EVENT SHALL THE AUTHOR BE LIABLE FOR
 * ANY SPECIAL, DIRECT, INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES
 * WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN
 * ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION, ARISING OUT OF
 * OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THIS SOFTWARE.
 */

/*
 * btrace: evaluation of rules, statements and expressions on an event.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "btrace.h"

uint64_t		 g_filtered;	/* events a filter rejected */
int			 g_rterror;	/* a run-time error stops the run */
int			 g_exitcode;
uint64_t		 g_start_nsecs;
extern volatile sig_atomic_t g_quit;

enum { ST_OK, ST_EXIT, ST_BREAK, ST_CONTINUE };

/* A run-time error abandons the rule being evaluated. */
static jmp_buf		*rt_jmp;

static int	exec_stmts(struct bt_stmt *, struct bt_evt_ctx *);

void
rt_error(const struct bt_pos *pos, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	bt_posmsg(pos, "%s", msg);
	g_rterror = 1;
	if (rt_jmp != NULL)
		longjmp(*rt_jmp, 1);
}

static const char *
opname(int op)
{
	static const char *names[] = {
		"?", "+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>",
		"==", "!=", "<", "<=", ">", ">=", "&&", "||", "-", "!", "~",
	};

	if (op < 0 || (size_t)op >= sizeof(names) / sizeof(names[0]))
		return "?";
	return names[op];
}

static int
truth(const struct bt_value *v, const struct bt_pos *pos)
{
	switch (v->v_type) {
	case VT_NIL:
		return 0;
	case VT_INT:
		return v->v_int != 0;
	default:
		rt_error(pos, "a %s is not a condition",
		    v->v_type == VT_STR ? "string" : "tuple");
		return 0;
	}
}

static long
toint(const struct bt_value *v, const struct bt_pos *pos, int op)
{
	if (v->v_type == VT_INT)
		return v->v_int;
	if (v->v_type == VT_NIL)
		return 0;
	rt_error(pos, "operator '%s' needs numbers, not a %s", opname(op),
	    v->v_type == VT_STR ? "string" : "tuple");
	return 0;
}

/* Integer arithmetic wraps around like the machine's, never traps. */
static struct bt_value
binop(int op, const struct bt_value *a, const struct bt_value *b,
    const struct bt_pos *pos)
{
	unsigned long ua, ub;
	long l, r;

	if (op == OP_EQ || op == OP_NE) {
		int eq;

		if (a->v_type == VT_STR || b->v_type == VT_STR)
			eq = strcmp(val2str(a), val2str(b)) == 0;
		else if (a->v_type == VT_TUPLE || b->v_type == VT_TUPLE)
			eq = val_equal(a, b);
		else
			eq = toint(a, pos, op) == toint(b, pos, op);
		return val_int(op == OP_EQ ? eq : !eq);
	}
	l = toint(a, pos, op);
	r = toint(b, pos, op);
	ua = (unsigned long)l;
	ub = (unsigned long)r;
	switch (op) {
	case OP_ADD:	return val_int((long)(ua + ub));
	case OP_SUB:	return val_int((long)(ua - ub));
	case OP_MUL:	return val_int((long)(ua * ub));
	case OP_DIV:
	case OP_MOD:
		if (r == 0) {
			rt_error(pos, op == OP_DIV ? "division by zero" :
			    "modulo by zero");
			return val_int(0);
		}
		if (r == -1)
			return val_int(op == OP_DIV ? (long)(0UL - ua) : 0);
		return val_int(op == OP_DIV ? l / r : l % r);
	case OP_BAND:	return val_int(l & r);
	case OP_BOR:	return val_int(l | r);
	case OP_XOR:	return val_int(l ^ r);
	case OP_SHL:
		return val_int(r < 0 || r > 63 ? 0 : (long)(ua << r));
	case OP_SHR:
		if (r < 0 || r > 63)
			return val_int(l < 0 ? -1 : 0);
		return val_int(l >> r);
	case OP_LT:	return val_int(l < r);
	case OP_LE:	return val_int(l <= r);
	case OP_GT:	return val_int(l > r);
	case OP_GE:	return val_int(l >= r);
	}
	return val_int(0);
}

/*
 * The string an event carries for argument n (userdt's DTEVT_STRINGS,
 * dtvar.h: a syscall entry's, a Linux tracepoint's string field), NULL
 * when it carries none.  The bytes are what the call was given, cut
 * where the event's space or the readable memory ended.
 */
const char *
evt_argstr(struct dt_evt *ev, int n)
{
	const unsigned char *a = DTEV_STR_AREA(ev);
	size_t off = 0, len;

	if (ev->dtev_kstack.st_count != 0)
		return NULL;
	while (off + DTEV_STR_HDR < DTEV_STR_SIZE && a[off] != 0) {
		len = a[off + 1];
		if (off + DTEV_STR_HDR + len >= DTEV_STR_SIZE)
			return NULL;
		if ((a[off] & DTEV_STR_ARG) == n + 1)
			return tmp_vis((const char *)a + off + DTEV_STR_HDR,
			    strnlen((const char *)a + off + DTEV_STR_HDR,
			    len));
		off += DTEV_STR_HDR + len + 1;
	}
	return NULL;
}

static struct bt_value
builtin(const struct bt_expr *e, struct bt_evt_ctx *ec)
{
	int id = e->be_op;
	struct dt_evt *ev = ec->ec_evt;
	struct bt_value v;
	char comm[DTMAXCOMLEN + 1];
	uint64_t ns;

	switch (id) {
	case B_PID:
		return val_int(ev->dtev_pid);
	case B_TID:
		return val_int(ev->dtev_tid);
	case B_CPU:
		return val_int(ev->dtev_cpu);
	case B_NSECS:
	case B_ELAPSED:
		ns = (uint64_t)ev->dtev_tsp.tv_sec * 1000000000ULL +
		    (uint64_t)ev->dtev_tsp.tv_nsec;
		if (id == B_ELAPSED)
			ns -= g_start_nsecs;
		v = val_int((long)ns);
		v.v_flags = VF_UNSIGNED;
		return v;
	case B_COMM:
		comm_of(ev, comm, sizeof(comm));	/* never empty */
		/* The thread's to choose, escapes and all: tmp_vis(). */
		return val_str(tmp_vis(comm, strlen(comm)));
	case B_KSTACK:
	case B_USTACK:
		return val_str(stack_str(ev, id == B_KSTACK, (int)e->be_int));
	case B_RETVAL:
		return val_int(ev->dtev_retval[0]);
	case B_CPID:
		return val_int(g_cpid);
	case B_UID:
		return val_int(ev->dtev_pid > 0 ? proc_uid(ev->dtev_pid) : -1);
	case B_GID:
		return val_int(ev->dtev_pid > 0 ? proc_gid(ev->dtev_pid) : -1);
	case B_CGROUP:
		v = val_int(ev->dtev_pid > 0 ? proc_cgroup(ev->dtev_pid) : 0);
		v.v_flags = VF_UNSIGNED;
		return v;
	case B_ARGNAME:
		/* rules_setup() made every args.NAME an argN */
		rt_error(&e->be_pos, "args.%s: no such field", e->be_str);
		return val_int(0);
	case B_ERRNO:
		/* a system call's error at return, 0 when it succeeded */
		return val_int(ev->dtev_error);
	case B_PROBE:
		if (ev->dtev_pbn == 0)
			return val_str("BEGIN");
		if (ev->dtev_pbn == (unsigned int)-1)
			return val_str("END");
		if (ev->dtev_pbn <= dt_ndtpi) {
			struct dtioc_probe_info *pi =
			    &dt_dtpis[ev->dtev_pbn - 1];

			return val_str(tmp_printf("%.16s:%s:%.16s",
			    pi->dtpi_prov, dtpi_func(pi), pi->dtpi_name));
		}
		return val_str(tmp_printf("%u", ev->dtev_pbn));
	default:
		if (id >= B_ARG0 && id <= B_ARG9) {
			int n = id - B_ARG0;
			const char *type = dev_argstr(ev, n);

			if (type != NULL && strcmp(type, "int") == 0)
				return val_int((int)ev->dtev_args[n]);
			v = val_int(ev->dtev_args[n]);
			v.v_flags = VF_UNSIGNED;
			return v;
		}
	}
	return val_int(0);
}

static struct bt_value
eval_keys(struct bt_expr *keys, struct bt_evt_ctx *ec)
{
	struct bt_value v;
	struct bt_expr *e;
	size_t n = 0, i;

	if (keys == NULL) {
		memset(&v, 0, sizeof(v));
		return v;
	}
	if (keys->be_next == NULL)
		return expr_eval(keys, ec);
	for (e = keys; e != NULL; e = e->be_next)
		n++;
	memset(&v, 0, sizeof(v));
	v.v_type = VT_TUPLE;
	v.v_ntup = n;
	v.v_tup = tmp_alloc(n * sizeof(*v.v_tup));
	for (i = 0, e = keys; e != NULL; e = e->be_next, i++)
		v.v_tup[i] = expr_eval(e, ec);
	return v;
}

/* Value of @m[key]; a missing key reads as 0 and is not inserted. */
static struct bt_value
map_read(struct bt_var *bv, const struct bt_value *key)
{
	struct bt_value *v;

	if (bv->bv_map == NULL || (v = map_lookup(bv->bv_map, key)) == NULL)
		return val_int(0);
	return *v;
}

struct bt_value
expr_eval(struct bt_expr *e, struct bt_evt_ctx *ec)
{
	struct bt_value a, b, v;
	struct bt_expr *m;
	size_t n, i;
	long len;

	switch (e->be_kind) {
	case E_INT:
		return val_int(e->be_int);
	case E_STR:
		return val_str(e->be_str);
	case E_NIL:
		memset(&v, 0, sizeof(v));
		return v;
	case E_BUILTIN:
		return builtin(e, ec);
	case E_GVAR:
		if (e->be_var->bv_ismap > 0) {
			memset(&a, 0, sizeof(a));
			return map_read(e->be_var, &a);
		}
		return e->be_var->bv_value;
	case E_LVAR:
		return e->be_var->bv_value;
	case E_MAPGET:
		a = eval_keys(e->be_left, ec);
		return map_read(e->be_var, &a);
	case E_TUPLE:
		for (n = 0, m = e->be_left; m != NULL; m = m->be_next)
			n++;
		memset(&v, 0, sizeof(v));
		v.v_type = VT_TUPLE;
		v.v_ntup = n;
		v.v_tup = tmp_alloc(n * sizeof(*v.v_tup));
		for (i = 0, m = e->be_left; m != NULL; m = m->be_next, i++)
			v.v_tup[i] = expr_eval(m, ec);
		return v;
	case E_TMEMBER:
		a = expr_eval(e->be_left, ec);
		if (a.v_type == VT_NIL) {
			memset(&v, 0, sizeof(v));
			return v;
		}
		if (a.v_type != VT_TUPLE || e->be_int < 0 ||
		    (size_t)e->be_int >= a.v_ntup) {
			rt_error(&e->be_pos, "no member %ld in this value",
			    e->be_int);
			return val_int(0);
		}
		return a.v_tup[e->be_int];
	case E_UNOP:
		a = expr_eval(e->be_left, ec);
		switch (e->be_op) {
		case OP_NOT:
			return val_int(!truth(&a, &e->be_pos));
		case OP_NEG:
			return val_int((long)(0UL -
			    (unsigned long)toint(&a, &e->be_pos, e->be_op)));
		default:
			return val_int(~toint(&a, &e->be_pos, e->be_op));
		}
	case E_BINOP:
		a = expr_eval(e->be_left, ec);
		if (e->be_op == OP_LAND || e->be_op == OP_LOR) {
			int t = truth(&a, &e->be_left->be_pos);

			if (e->be_op == OP_LAND ? !t : t)
				return val_int(t);
			b = expr_eval(e->be_right, ec);
			return val_int(truth(&b, &e->be_right->be_pos));
		}
		b = expr_eval(e->be_right, ec);
		return binop(e->be_op, &a, &b, &e->be_pos);
	case E_COND:
		a = expr_eval(e->be_left, ec);
		if (truth(&a, &e->be_left->be_pos))
			return expr_eval(e->be_right, ec);
		return expr_eval(e->be_third, ec);
	case E_STRFTIME: {
		/*
		 * bpftrace's strftime(fmt, nsecs), local time; nsecs here
		 * is wall-clock time (dt(4)'s nanotime()), so nsecs itself
		 * is the time of the event.  %f: the microseconds, as
		 * bpftrace's.
		 */
		char fmt[256], out[512], *q;
		const char *f;
		struct tm tm;
		time_t t;
		long ns;

		a = expr_eval(e->be_left->be_next, ec);
		ns = toint(&a, &e->be_left->be_next->be_pos, 0);
		t = (time_t)(ns / 1000000000L);
		for (f = e->be_left->be_str, q = fmt; *f != '\0' &&
		    q < fmt + sizeof(fmt) - 8; f++) {
			if (f[0] == '%' && f[1] == 'f') {
				q += snprintf(q, 8, "%06ld",
				    (ns % 1000000000L) / 1000);
				f++;
			} else if (f[0] == '%' && f[1] == '%') {
				*q++ = *f++;
				*q++ = *f;
			} else
				*q++ = *f;
		}
		*q = '\0';
		if (localtime_r(&t, &tm) == NULL)
			return val_str("");
		if (strftime(out, sizeof(out), fmt, &tm) == 0)
			out[0] = '\0';
		return val_str(tmp_strdup(out));
	}
	case E_STRFN:
		a = expr_eval(e->be_left, ec);
		if (e->be_left->be_kind == E_BUILTIN &&
		    e->be_left->be_op >= B_ARG0 && e->be_left->be_op <= B_ARG9) {
			const char *as = evt_argstr(ec->ec_evt,
			    e->be_left->be_op - B_ARG0);

			if (as != NULL)
				a = val_str(as);
		}
		len = STRLEN;
		if (e->be_left->be_next != NULL) {
			b = expr_eval(e->be_left->be_next, ec);
			len = toint(&b, &e->be_pos, 0);
			len = len < STRLEN - 1 ? len + 1 : STRLEN;
		}
		if (len < 1)
			return val_str("");
		{
			const char *s = val2str(&a);
			char *t = tmp_alloc(len);

			snprintf(t, len, "%s", s);
			return val_str(t);
		}
	case E_KSYM:
	case E_USYM:
		a = expr_eval(e->be_left, ec);
		len = toint(&a, &e->be_pos, 0);
		if (e->be_kind == E_KSYM)
			return val_str(ksym_str((unsigned long)len));
		return val_str(usym_str(ec->ec_evt->dtev_pid,
		    (unsigned long)len));
	}
	return val_int(0);
}

static void
store(struct bt_stmt *s, struct bt_evt_ctx *ec)
{
	struct bt_value key, val, cur;
	struct bt_var *bv = s->bs_var;

	val = expr_eval(s->bs_expr, ec);
	if (s->bs_kind == S_MAPSTORE) {
		key = eval_keys(s->bs_keys, ec);
		if (s->bs_op != 0) {
			cur = map_read(bv, &key);
			val = binop(s->bs_op, &cur, &val, &s->bs_pos);
		}
		if (bv->bv_map == NULL)
			bv->bv_map = map_new();
		map_store(bv->bv_map, &key, &val);
		return;
	}
	if (s->bs_op != 0) {
		cur = bv->bv_value;
		val = binop(s->bs_op, &cur, &val, &s->bs_pos);
	}
	/* copy first: val may point into the old value */
	val_copy(&cur, &val);
	val_free(&bv->bv_value);
	bv->bv_value = cur;
}

static void
stmt_time(struct bt_stmt *s, struct bt_evt_ctx *ec)
{
	const char *fmt = "%H:%M:%S\n";
	struct bt_value v;
	char buf[512];
	struct tm tm;
	time_t t;

	if (s->bs_expr != NULL) {
		v = expr_eval(s->bs_expr, ec);
		fmt = val2str(&v);
	}
	t = ec->ec_evt->dtev_tsp.tv_sec;
	localtime_r(&t, &tm);
	if (strftime(buf, sizeof(buf), fmt, &tm) == 0)
		buf[0] = '\0';
	if (g_json) {
		printf("{\"type\": \"time\", \"data\": ");
		json_str(stdout, buf);
		printf("}\n");
	} else
		printf("%s", buf);
}

static void
stmt_print(struct bt_stmt *s, struct bt_evt_ctx *ec)
{
	struct bt_value v;
	size_t top = (size_t)-1;
	long div = 1;

	if (s->bs_var == NULL || s->bs_var->bv_ismap <= 0) {
		if (s->bs_var == NULL)
			v = expr_eval(s->bs_expr, ec);
		else if ((v = s->bs_var->bv_value).v_type == VT_NIL)
			return;	/* never assigned: nothing, as OpenBSD */
		if (g_json && s->bs_var != NULL && !s->bs_var->bv_local) {
			/* every @ is a map to bpftrace, even without keys */
			printf("{\"type\": \"map\", \"data\": {");
			json_str(stdout, tmp_printf("@%s",
			    s->bs_var->bv_name));
			printf(": ");
			json_value(&v);
			printf("}}\n");
		} else if (g_json) {
			printf("{\"type\": \"value\", \"data\": ");
			json_value(&v);
			printf("}\n");
		} else
			printf("%s\n", val2str(&v));
		return;
	}
	if (s->bs_expr != NULL) {
		v = expr_eval(s->bs_expr, ec);
		top = (size_t)toint(&v, &s->bs_expr->be_pos, 0);
		if (s->bs_expr->be_next != NULL) {
			v = expr_eval(s->bs_expr->be_next, ec);
			div = toint(&v, &s->bs_expr->be_next->be_pos, 0);
			if (div == 0) {
				rt_error(&s->bs_expr->be_next->be_pos,
				    "division by zero");
				return;
			}
		}
	}
	map_print(s->bs_var, top, div);
}

static int
stmt_for(struct bt_stmt *s, struct bt_evt_ctx *ec)
{
	struct bt_value *keys, *vals, *pair;
	struct bt_var *kv = s->bs_expr->be_var;
	struct tmp_mark mark;
	size_t n, i;
	int st;

	if (s->bs_var->bv_map == NULL)
		return ST_OK;
	map_keys(s->bs_var->bv_map, &keys, &vals, &n);
	pair = tmp_alloc(2 * sizeof(*pair));
	for (i = 0; i < n && !g_quit && !g_rterror; i++) {
		struct bt_value t;

		pair[0] = keys[i];
		pair[1] = vals[i];
		memset(&t, 0, sizeof(t));
		t.v_type = VT_TUPLE;
		t.v_tup = pair;
		t.v_ntup = 2;
		val_free(&kv->bv_value);
		val_copy(&kv->bv_value, &t);
		mark = tmp_mark();
		st = exec_stmts(s->bs_body, ec);
		tmp_release(mark);
		if (st == ST_EXIT)
			return st;
		if (st == ST_BREAK)
			break;
	}
	return ST_OK;
}

static int
exec_stmt(struct bt_stmt *s, struct bt_evt_ctx *ec)
{
	struct bt_value v, key;
	int st;

	switch (s->bs_kind) {
	case S_NOP:
		break;
	case S_STORE:
	case S_MAPSTORE:
		store(s, ec);
		break;
	case S_AGG:
		key = eval_keys(s->bs_keys, ec);
		if (s->bs_agg == A_COUNT)
			v = val_int(0);
		else {
			v = expr_eval(s->bs_expr, ec);
			v = val_int(toint(&v, &s->bs_expr->be_pos, 0));
		}
		if (!g_rterror)
			map_agg(s->bs_var, &key, s->bs_agg, v.v_int);
		break;
	case S_PRINTF:
		bt_printf(s->bs_expr, ec);
		break;
	case S_PRINT:
		/* what dtd folded (bt_agg.c) is the map's too */
		agg_sync();
		stmt_print(s, ec);
		break;
	case S_CLEAR:
		if (agg_folds(s->bs_var))
			agg_sync();
		if (s->bs_var->bv_map != NULL)
			map_clear(s->bs_var->bv_map);
		break;
	case S_ZERO:
		if (agg_folds(s->bs_var))
			agg_sync();
		if (s->bs_var->bv_map != NULL)
			map_zero(s->bs_var->bv_map);
		break;
	case S_DELETE:
		if (agg_folds(s->bs_var))
			agg_sync();
		key = eval_keys(s->bs_keys, ec);
		if (s->bs_var->bv_map != NULL)
			map_delete(s->bs_var->bv_map, &key);
		break;
	case S_EXIT:
		if (s->bs_expr != NULL) {
			v = expr_eval(s->bs_expr, ec);
			g_exitcode = (int)toint(&v, &s->bs_expr->be_pos, 0);
		}
		return ST_EXIT;
	case S_TIME:
		stmt_time(s, ec);
		break;
	case S_IF:
		v = expr_eval(s->bs_expr, ec);
		if (truth(&v, &s->bs_expr->be_pos))
			return exec_stmts(s->bs_body, ec);
		if (s->bs_else != NULL)
			return exec_stmts(s->bs_else, ec);
		break;
	case S_WHILE:
		for (;;) {
			struct tmp_mark mark = tmp_mark();

			v = expr_eval(s->bs_expr, ec);
			if (g_rterror || g_quit || !truth(&v,
			    &s->bs_expr->be_pos))
				break;
			st = exec_stmts(s->bs_body, ec);
			tmp_release(mark);
			if (st == ST_EXIT)
				return st;
			if (st == ST_BREAK)
				break;
		}
		break;
	case S_FOR:
		return stmt_for(s, ec);
	case S_BREAK:
		return ST_BREAK;
	case S_CONTINUE:
		return ST_CONTINUE;
	case S_BLOCK:
		return exec_stmts(s->bs_body, ec);
	}
	return ST_OK;
}

static int
exec_stmts(struct bt_stmt *s, struct bt_evt_ctx *ec)
{
	int st;

	for (; s != NULL; s = s->bs_next) {
		st = exec_stmt(s, ec);
		if (g_rterror)
			return ST_EXIT;
		if (st != ST_OK)
			return st;
	}
	return ST_OK;
}

/* Locals ($x) start empty for every event. */
static void
locals_free(struct bt_rule *r)
{
	struct bt_var *bv;

	for (bv = r->br_locals; bv != NULL; bv = bv->bv_next)
		val_free(&bv->bv_value);
}

/* Returns non-zero when the program must stop. */
int
rule_eval(struct bt_rule *r, struct dt_evt *ev, int fake)
{
	struct bt_evt_ctx ec;
	struct bt_value v;
	jmp_buf jb;
	int st;

	ec.ec_evt = ev;
	ec.ec_fake = fake;
	ec.ec_rule = r;
	locals_free(r);
	if (setjmp(jb) != 0) {
		rt_jmp = NULL;
		locals_free(r);
		tmp_reset();
		return 1;
	}
	rt_jmp = &jb;
	if (r->br_filter != NULL) {
		v = expr_eval(r->br_filter, &ec);
		if (!truth(&v, &r->br_filter->be_pos)) {
			g_filtered++;
			rt_jmp = NULL;
			tmp_reset();
			return 0;
		}
	}
	st = exec_stmts(r->br_action, &ec);
	rt_jmp = NULL;
	locals_free(r);
	tmp_reset();
	return st == ST_EXIT || g_rterror;
}
