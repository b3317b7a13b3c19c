/* SPDX-License-Identifier: MIT */
/*
 * `fairctl top`: the live view, modeled on systemd-cgtop. Asks the daemon for
 * its status every refresh (default: the daemon's period) and shows one row
 * per tenant: weight, entitlement, granted fraction, share, minimal gap,
 * mode, bottlenecks, and use/allocation of cpu, memory, io and net.
 *
 * Keys: c/m/i/n/s/g sort by cpu, memory, io, net, share, gap (again: reverse);
 * + and - change the refresh delay; space refreshes now; h or ? help; q quits.
 * -b/--batch (automatic when stdout is not a terminal) prints plain text
 * frames; -n N stops after N frames.
 */
#include <errno.h>
#include <getopt.h>
#include <locale.h>
#include <math.h>
#include <ncurses.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "control_json.h"
#include "fairctl.h"
#include "fairctl_client.h"
#ifdef FAIRCTL_HAVE_FLEET
#include "fairctl_fleet.h"
#endif

#define DELAY_MIN 0.1
#define DELAY_MAX 60.0

enum order { ORDER_CPU, ORDER_MEM, ORDER_IO, ORDER_NET, ORDER_SHARE, ORDER_GAP };

/* One table row: a tenant and its sort keys, worked out once per frame rather
 * than in every comparison. */
struct row {
	const struct fcj_tenant *t;
	double use, alloc;
};

static const char *const order_names[] = {"cpu", "memory", "io", "net", "share", "gap"};

struct top {
	const char *sock;
	double delay; /* seconds; <= 0 until known (then the daemon's period) */
	bool delay_set;
	enum order order;
	bool reverse;
	bool batch;
	long iterations; /* < 0: forever */
	bool help;
	char error[512]; /* last fetch error, shown instead of the table */
	struct fcj_status st;
	/* st.n_tenants of them, allocated with st: the daemon sets no limit on
	 * the number of tenants, so neither can the table */
	struct row *rows;
	bool have;
};

static volatile sig_atomic_t quit_signal;

static void on_signal(int sig)
{
	quit_signal = sig;
}

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "Usage: fairctl top [--batch] [-n N] [--delay SECONDS] [--order KEY] [--socket "
	    "PATH]\n"
	    "       fairctl top --fleet [--config FILE] [--batch] [-n N] [--delay S]   (the whole\n"
	    "       fleet from etcd: fairctl fleet --help)\n\n"
	    "Live view of the running fairshared: one row per tenant, refreshed every period.\n\n"
	    "  -b, --batch          plain text frames, no terminal control (automatic when\n"
	    "                       stdout is not a terminal)\n"
	    "  -n, --iterations N   stop after N frames\n"
	    "  -d, --delay SECONDS  refresh delay (default: the daemon's period)\n"
	    "  -o, --order KEY      cpu, memory, io, net, share or gap (default cpu)\n"
	    "  -s, --socket PATH    control socket (default $" FAIRCTL_SOCKET_ENV
	    " or " FAIRCTL_DEFAULT_SOCKET ")\n"
	    "  -h, --help           this text\n\n"
	    "Keys: c cpu, m memory, i io, n net, s share, g gap (sort; again reverses),\n"
	    "      + / - slower / faster refresh, space refresh now, h or ? help, q quit.\n"
	    "Columns: W weight, ENT entitlement, GRANT fraction of demand granted, SHARE the\n"
	    "policy's share, GAP minimal gap, then use/allocation per resource (cpu in\n"
	    "cores, memory in bytes (K/M/G binary), io and net in B/s (k/M/G decimal)).\n");
}

/* Sum over the resources of one kind family ("io" = read+write bytes/s, of
 * split or shared disks). */
static double family(const struct fcj_status *s, const double *v, const char *fam)
{
	double sum = 0;
	bool any = false;

	for (size_t r = 0; r < s->n_res; r++) {
		const char *k = s->res[r].kind;
		bool match = !strcmp(fam, "io") ? !strcmp(k, "io-rbps") || !strcmp(k, "io-wbps") ||
						      !strcmp(k, "io-bps")
						: !strcmp(k, fam);

		if (match && !isnan(v[r])) {
			sum += isinf(v[r]) ? 0 : v[r];
			any = true;
		}
	}
	return any ? sum : NAN;
}

static double sort_value(const struct top *tp, const struct fcj_tenant *t, bool alloc)
{
	const struct fcj_status *s = &tp->st;
	const double *v = alloc ? t->alloc : t->usage;

	switch (tp->order) {
	case ORDER_CPU:
		return family(s, v, "cpu");
	case ORDER_MEM:
		return family(s, v, "memory");
	case ORDER_IO:
		return family(s, v, "io");
	case ORDER_NET:
		return family(s, v, "net");
	case ORDER_SHARE:
		return alloc ? t->granted : t->share;
	case ORDER_GAP:
		return alloc ? t->share : t->gap;
	}
	return 0;
}

static int cmp_desc(double a, double b)
{
	if (isnan(a))
		a = -INFINITY;
	if (isnan(b))
		b = -INFINITY;
	return a > b ? -1 : a < b ? 1 : 0;
}

static int cmp_rows(const void *pa, const void *pb, void *reverse)
{
	const struct row *a = pa, *b = pb;
	int c = cmp_desc(a->use, b->use);

	if (!c)
		c = cmp_desc(a->alloc, b->alloc);
	if (*(const bool *)reverse)
		c = -c;
	if (!c)
		c = strcmp(a->t->name, b->t->name);
	if (!c) /* same name twice: the daemon's order, so frames do not flicker */
		c = (a->t > b->t) - (a->t < b->t);
	return c;
}

/* Largest first (use, then allocation, then name), like systemd-cgtop.
 * qsort: thousands of tenants are redrawn on every key press. */
static void sort_rows(struct top *tp)
{
	size_t n = tp->st.n_tenants;

	for (size_t i = 0; i < n; i++) {
		struct row *rw = &tp->rows[i];

		rw->t = &tp->st.t[i];
		rw->use = sort_value(tp, rw->t, false);
		rw->alloc = sort_value(tp, rw->t, true);
	}
	qsort_r(tp->rows, n, sizeof(*tp->rows), cmp_rows, &tp->reverse);
}

typedef void (*line_fn)(void *ctx, bool bold, const char *text);

static void emit(line_fn out, void *ctx, bool bold, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void emit(line_fn out, void *ctx, bool bold, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	out(ctx, bold, buf);
}

/* "use/alloc" of one family, short units. */
static void pair(const struct fcj_status *s, const struct fcj_tenant *t, const char *fam, char *buf,
		 size_t len)
{
	const char *kind = !strcmp(fam, "io") ? "io-rbps" : fam;
	double u = family(s, t->usage, fam), a = family(s, t->alloc, fam);
	char us[16], as[16];

	if (isnan(u) && isnan(a)) {
		snprintf(buf, len, "-");
		return;
	}
	fcj_fmt_short(kind, u, us, sizeof(us));
	fcj_fmt_short(kind, a, as, sizeof(as));
	snprintf(buf, len, "%s/%s", us, as);
}

static void render(struct top *tp, line_fn out, void *ctx)
{
	const struct fcj_status *s = &tp->st;
	char sat[400] = "", cpu[40], mem[40], io[40], net[40];
	size_t used = 0;

	emit(out, ctx, true,
	     "fairshare  policy %s  mode %s  period #%llu (%.3g s)  refresh %.1f s%s%s", s->policy,
	     s->mode, (unsigned long long)s->period, s->interval, tp->delay,
	     s->dry_run ? "  [dry-run]" : "", s->released ? "  [RELEASED]" : "");
	for (size_t r = 0; r < s->n_res; r++) {
		int w;

		if (!s->res[r].state[0])
			continue;
		w = snprintf(sat + used, sizeof(sat) - used, "%s%s %s %.0f%% alloc %.0f%% used",
			     used ? ", " : "", s->res[r].name, s->res[r].state,
			     100 * s->res[r].allocated / s->res[r].capacity,
			     100 * s->res[r].used / s->res[r].capacity);
		if (w > 0 && (size_t)w < sizeof(sat) - used)
			used += (size_t)w;
	}
	emit(out, ctx, false, "bottlenecks: %s   sort: %s%s", used ? sat : "none",
	     order_names[tp->order], tp->reverse ? " (reversed)" : "");
	if (tp->error[0])
		emit(out, ctx, true, "%s", tp->error);
	emit(out, ctx, true, "%-16s %5s %6s %6s %7s %7s %-8s %-12s %12s %13s %13s %13s", "TENANT",
	     "W", "ENT%", "GRANT%", "SHARE", "GAP", "MODE", "BOTTLENECK", "CPU use/al",
	     "MEM use/al", "IO use/al", "NET use/al");
	sort_rows(tp);
	for (size_t k = 0; k < s->n_tenants; k++) {
		const struct fcj_tenant *t = tp->rows[k].t;
		char label[FCJ_NAME * 2 + 2];

		/* a template's tenant: NAME@TEMPLATE (NAME is a user's login name) */
		snprintf(label, sizeof(label), "%s%s%s", t->name, t->template_name[0] ? "@" : "",
			 t->template_name);
		pair(s, t, "cpu", cpu, sizeof(cpu));
		pair(s, t, "memory", mem, sizeof(mem));
		pair(s, t, "io", io, sizeof(io));
		pair(s, t, "net", net, sizeof(net));
		emit(out, ctx, false,
		     "%-16.16s %5.3g %6.1f %6.1f %7.4f %7.4f %-8.8s %-12.12s %12s %13s %13s %13s",
		     label, t->weight, 100 * t->entitlement, 100 * t->granted, t->share, t->gap,
		     t->mode, t->bottlenecks[0] ? t->bottlenecks : "-", cpu, mem, io, net);
	}
}

/* The one place the status and its rows are freed: on replacing them and on
 * exit. */
static void drop_status(struct top *tp)
{
	fcj_status_free(&tp->st);
	free(tp->rows);
	tp->rows = NULL;
	tp->have = false;
}

/* On failure the last good status stays on screen, with the error above it. */
static void fetch(struct top *tp)
{
	struct json_object *resp = NULL;
	struct fcj_status st = {0};
	struct row *rows = NULL;
	int r;

	r = fctl_request(fctl_socket_path(tp->sock), "status", NULL, &resp, tp->error,
			 sizeof(tp->error));
	if (r == 0) {
		r = fcj_status_parse(resp, &st, tp->error, sizeof(tp->error));
		json_object_put(resp);
	}
	if (r == 0) {
		rows = calloc(st.n_tenants ? st.n_tenants : 1, sizeof(*rows));
		if (!rows) {
			snprintf(tp->error, sizeof(tp->error), "out of memory for %zu tenants",
				 st.n_tenants);
			r = -ENOMEM;
		}
	}
	if (r == 0) {
		drop_status(tp);
		tp->st = st;
		tp->rows = rows;
		tp->have = true;
		tp->error[0] = '\0';
	} else {
		fcj_status_free(&st);
	}
	if (!tp->delay_set && tp->have && tp->st.interval > 0)
		tp->delay = fmin(DELAY_MAX, fmax(DELAY_MIN, tp->st.interval));
}

static void batch_line(void *ctx, bool bold, const char *text)
{
	(void)ctx;
	(void)bold;
	puts(text);
}

static int run_batch(struct top *tp)
{
	for (long i = 0; tp->iterations < 0 || i < tp->iterations; i++) {
		struct timespec ts;

		if (i) {
			ts.tv_sec = (time_t)tp->delay;
			ts.tv_nsec = (long)((tp->delay - (double)ts.tv_sec) * 1e9);
			while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !quit_signal)
				;
		}
		if (quit_signal)
			break;
		fetch(tp);
		if (!tp->have) {
			fprintf(stderr, "fairctl top: %s\n", tp->error);
			return FAIRCTL_EXIT_FAIL;
		}
		if (i)
			putchar('\n');
		render(tp, batch_line, NULL);
		if (fflush(stdout) != 0)
			return FAIRCTL_EXIT_FAIL;
	}
	return FAIRCTL_EXIT_OK;
}

struct screen {
	int row;
};

static void curses_line(void *ctx, bool bold, const char *text)
{
	struct screen *sc = ctx;

	if (sc->row >= LINES)
		return;
	if (bold)
		attron(A_BOLD);
	mvaddnstr(sc->row++, 0, text, COLS);
	if (bold)
		attroff(A_BOLD);
}

static void draw_help(void)
{
	static const char *const lines[] = {
	    "fairctl top keys",
	    "",
	    "  c  sort by cpu use        m  sort by memory use",
	    "  i  sort by io use         n  sort by net use",
	    "  s  sort by share          g  sort by minimal gap",
	    "     (the same key again reverses the order)",
	    "  +  slower refresh         -  faster refresh",
	    "  space  refresh now        h, ?  this help",
	    "  q  quit",
	    "",
	    "any key returns",
	};

	erase();
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]) && (int)i < LINES; i++)
		mvaddnstr((int)i, 0, lines[i], COLS);
	refresh();
}

static void draw(struct top *tp)
{
	struct screen sc = {0};

	if (tp->help) {
		draw_help();
		return;
	}
	erase();
	if (tp->have)
		render(tp, curses_line, &sc);
	else
		curses_line(&sc, true, tp->error[0] ? tp->error : "waiting for fairshared...");
	refresh();
}

static void set_order(struct top *tp, enum order o)
{
	tp->reverse = tp->order == o ? !tp->reverse : false;
	tp->order = o;
}

static int run_curses(struct top *tp)
{
	long frames = 0;
	bool running = true;

	if (!initscr())
		return FAIRCTL_EXIT_FAIL;
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	fetch(tp);
	while (running && !quit_signal) {
		struct timespec start, now;
		int ch;

		draw(tp);
		frames++;
		if (tp->iterations >= 0 && frames >= tp->iterations)
			break;
		clock_gettime(CLOCK_MONOTONIC, &start);
		for (;;) {
			double waited;

			clock_gettime(CLOCK_MONOTONIC, &now);
			waited = (double)(now.tv_sec - start.tv_sec) +
				 (double)(now.tv_nsec - start.tv_nsec) / 1e9;
			if (waited >= tp->delay || quit_signal)
				break;
			timeout((int)((tp->delay - waited) * 1000) + 1);
			ch = getch();
			if (ch == ERR)
				continue;
			if (tp->help) { /* any key closes the help */
				tp->help = false;
				draw(tp);
				continue;
			}
			switch (ch) {
			case 'q':
			case 'Q':
				running = false;
				break;
			case 'c':
				set_order(tp, ORDER_CPU);
				break;
			case 'm':
				set_order(tp, ORDER_MEM);
				break;
			case 'i':
				set_order(tp, ORDER_IO);
				break;
			case 'n':
				set_order(tp, ORDER_NET);
				break;
			case 's':
				set_order(tp, ORDER_SHARE);
				break;
			case 'g':
				set_order(tp, ORDER_GAP);
				break;
			case '+':
				tp->delay = fmin(DELAY_MAX,
						 tp->delay < 1 ? tp->delay + 0.1 : tp->delay + 0.5);
				tp->delay_set = true;
				break;
			case '-':
				tp->delay = fmax(DELAY_MIN, tp->delay <= 1 ? tp->delay - 0.1
									   : tp->delay - 0.5);
				tp->delay_set = true;
				break;
			case 'h':
			case '?':
				tp->help = true;
				break;
			case ' ':
				break;
			default:
				continue; /* KEY_RESIZE and the rest: redraw below */
			}
			if (!running || ch == ' ')
				break;
			draw(tp);
		}
		if (running && !quit_signal)
			fetch(tp);
	}
	endwin();
	return FAIRCTL_EXIT_OK;
}

static int parse_order(const char *s, enum order *o)
{
	for (size_t i = 0; i < sizeof(order_names) / sizeof(order_names[0]); i++)
		if (!strcmp(s, order_names[i]) || (s[0] == order_names[i][0] && !s[1])) {
			*o = (enum order)i;
			return 0;
		}
	return -EINVAL;
}

int fairctl_top_main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"batch", no_argument, NULL, 'b'},
	    {"iterations", required_argument, NULL, 'n'},
	    {"delay", required_argument, NULL, 'd'},
	    {"order", required_argument, NULL, 'o'},
	    {"socket", required_argument, NULL, 's'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	struct top tp = {.delay = 1.0, .iterations = -1};
	struct sigaction sa = {.sa_handler = on_signal};

#ifdef FAIRCTL_HAVE_FLEET
	if (fairctl_fleet_asked(argc, argv))
		return fairctl_fleet_exec("top", argc, argv);
#endif
	char *end;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "bn:d:o:s:h", opts, NULL)) != -1) {
		switch (c) {
		case 'b':
			tp.batch = true;
			break;
		case 'n':
			tp.iterations = strtol(optarg, &end, 10);
			if (*end || tp.iterations < 1) {
				fprintf(stderr, "fairctl top: -n wants a count >= 1, not '%s'\n",
					optarg);
				return FAIRCTL_EXIT_USAGE;
			}
			break;
		case 'd':
			tp.delay = strtod(optarg, &end);
			if (*end || !(tp.delay >= DELAY_MIN) || tp.delay > DELAY_MAX) {
				fprintf(stderr, "fairctl top: --delay wants %.1f..%.0f seconds\n",
					DELAY_MIN, DELAY_MAX);
				return FAIRCTL_EXIT_USAGE;
			}
			tp.delay_set = true;
			break;
		case 'o':
			if (parse_order(optarg, &tp.order) < 0) {
				fprintf(stderr, "fairctl top: unknown order '%s'\n", optarg);
				return FAIRCTL_EXIT_USAGE;
			}
			break;
		case 's':
			tp.sock = optarg;
			break;
		case 'h':
			usage(stdout);
			return FAIRCTL_EXIT_OK;
		default:
			usage(stderr);
			return FAIRCTL_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "fairctl top: unexpected argument '%s'\n", argv[optind]);
		return FAIRCTL_EXIT_USAGE;
	}
	if (!isatty(STDOUT_FILENO))
		tp.batch = true;
	/* before initscr: ncurses then keeps our handlers and we always endwin() */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (tp.batch) {
		ret = run_batch(&tp);
	} else {
		setlocale(LC_ALL, "");
		/* fail before taking the terminal when the daemon is not there */
		fetch(&tp);
		if (!tp.have) {
			fprintf(stderr, "fairctl top: %s\n", tp.error);
			ret = FAIRCTL_EXIT_FAIL;
			goto out;
		}
		ret = run_curses(&tp);
	}
out:
	drop_status(&tp);
	return ret;
}
