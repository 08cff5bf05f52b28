/*
 * clickbench: the measuring half of bench/run (which starts Xvfb and the daemon and
 * prints the table). Every figure is taken here with CLOCK_MONOTONIC.
 *
 *   latency --mode target|inside|outside|rtt --clicks N [--daemon [--pid P]|--reference-grabber
 *           [--watching-windows|--shield]] [--samples FILE] [--burst-pid P] [--pace-ms N]
 *   stats --samples FILE
 *   idle --pid P --seconds S --popups N [--notify-socket PATH]
 *   memory --pid P --checkpoints A,B,... [--inside-per-cycle K]
 *   burst --clicks N [--in-flight N] [--daemon|--reference-grabber]
 *   wait-ready --pid P
 *   startup --runs N --log FILE -- DAEMON ARGS...
 *   stop --pid P
 *   reload --pid P --runs N
 *   windows --popups N --mode cycle|keep [--class CLASS] [--override-redirect]
 *   openpid --runs N
 *   repeat --interval-ms N [--samples FILE] [--and-status] -- COMMAND ARGS...
 *
 * The X display comes from $DISPLAY, the control socket from
 * $XDG_RUNTIME_DIR/clickaway/ctl.sock. Results are printed as key=value lines.
 * Every wait is bounded and fails with a sentence naming what did not happen.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xcb/xcb.h>
#include <xcb/xcbext.h> /* xcb_poll_for_reply */
#include <xcb/xfixes.h>
#include <xcb/xtest.h>

extern char **environ;

enum { WAIT_MS = 5000 };
/* How long a click's press and release, and a reply of the daemon, are waited for: WAIT_MS,
 * but 120 s in a paced run (latency --pace-ms), whose point is a daemon that may stall for
 * seconds (issue 43): a press held that long is a figure of the run, not its failure. */
static int event_wait_ms = WAIT_MS;

static const char *mode_name = "clickbench";
/* A daemon this process started and must not leave behind when it fails. */
static pid_t own_child;

__attribute__((noreturn, format(printf, 1, 2))) static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "clickbench %s: ", mode_name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    if (own_child > 0) kill(own_child, SIGTERM);
    exit(1);
}

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Milliseconds left until `deadline` (ns), at least 0. */
static int ms_left(int64_t deadline) {
    int64_t left = (deadline - now_ns()) / 1000000;
    return left < 0 ? 0 : (int)left + 1;
}

/* ---------- statistics ---------- */

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted samples. */
static int64_t percentile(const int64_t *sorted, size_t n, double p) {
    size_t rank = (size_t)(p / 100.0 * (double)n + 0.999999);
    if (rank < 1) rank = 1;
    if (rank > n) rank = n;
    return sorted[rank - 1];
}

/* Appends the raw samples (ns, one a line) to `path`, for stats over several runs. */
static void save_samples(const char *path, const int64_t *samples, size_t n) {
    FILE *f = fopen(path, "a");
    if (!f) die("cannot open %s: %s", path, strerror(errno));
    for (size_t i = 0; i < n; i++) fprintf(f, "%lld\n", (long long)samples[i]);
    if (fclose(f) != 0) die("cannot write %s: %s", path, strerror(errno));
}

static void print_latency(int64_t *samples, size_t n) {
    qsort(samples, n, sizeof *samples, cmp_i64);
    printf("n=%zu p50_us=%.1f p99_us=%.1f max_us=%.1f\n", n, percentile(samples, n, 50) / 1e3,
           percentile(samples, n, 99) / 1e3, samples[n - 1] / 1e3);
}

/* ---------- the control socket ---------- */

static char ctl_path[PATH_MAX];
static char ctl_dir[PATH_MAX];

static void ctl_paths(void) {
    const char *runtime = getenv("XDG_RUNTIME_DIR");
    if (!runtime || !*runtime) die("XDG_RUNTIME_DIR is not set: it locates the daemon's control socket");
    if ((size_t)snprintf(ctl_path, sizeof ctl_path, "%s/clickaway/ctl.sock", runtime) >= sizeof((struct sockaddr_un *)0)->sun_path)
        die("the control socket path %s is too long for a unix socket", ctl_path);
    snprintf(ctl_dir, sizeof ctl_dir, "%s/clickaway", runtime);
}

/* Returns a connected socket, or -1 with errno set. */
static int ctl_try_connect(void) {
    ctl_paths();
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) die("socket: %s", strerror(errno));
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    memcpy(addr.sun_path, ctl_path, strlen(ctl_path) + 1);
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

static int ctl_connect(void) {
    int fd = ctl_try_connect();
    if (fd < 0) die("cannot connect to the daemon's control socket %s: %s", ctl_path, strerror(errno));
    return fd;
}

/* Sends one request line and returns the reply line (malloc'd, without the newline). */
static char *ctl_request(int fd, const char *request) {
    size_t len = strlen(request);
    char line[256];
    if (len + 2 > sizeof line) die("request too long: %s", request);
    memcpy(line, request, len);
    line[len++] = '\n';
    for (size_t sent = 0; sent < len;) {
        ssize_t n = send(fd, line + sent, len - sent, MSG_NOSIGNAL);
        if (n < 0) die("sending %s to the daemon: %s", request, strerror(errno));
        sent += (size_t)n;
    }
    size_t cap = 4096, have = 0;
    char *reply = malloc(cap);
    int64_t deadline = now_ns() + (int64_t)event_wait_ms * 1000000;
    for (;;) {
        char *nl = have ? memchr(reply, '\n', have) : NULL;
        if (nl) {
            if ((size_t)(nl - reply) + 1 != have) die("the daemon sent more than one line in reply to %s", request);
            *nl = 0;
            return reply;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, ms_left(deadline));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) die("the daemon did not answer %s within %d ms", request, event_wait_ms);
        if (have + 4096 > cap) reply = realloc(reply, cap *= 2);
        ssize_t n = read(fd, reply + have, cap - have);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) die("the daemon closed the control connection instead of answering %s", request);
        have += (size_t)n;
    }
}

static void ctl_sync(int fd) {
    char *reply = ctl_request(fd, "{\"request\":\"sync\"}");
    if (strcmp(reply, "{\"ok\":true}") != 0) die("sync answered %s instead of {\"ok\":true}", reply);
    free(reply);
}

static int count_occurrences(const char *haystack, const char *needle) {
    int n = 0;
    for (const char *p = strstr(haystack, needle); p; p = strstr(p + 1, needle)) n++;
    return n;
}

/* Checks the daemon's own account: whether it intercepts clicks (a grab on the root in grab
 * mode, the shield window mapped in shield mode), how many bench popups are open. */
static void ctl_expect(int fd, int intercepting, int open_popups) {
    char *reply = ctl_request(fd, "{\"request\":\"status\"}");
    int grabbing = strstr(reply, "\"grab\":{\"active\":true") != NULL;
    int shielding = strstr(reply, "\"shield\":{") && strstr(strstr(reply, "\"shield\":{"), "\"mapped\":true");
    if ((grabbing || shielding) != intercepting)
        die("the daemon %s; status: %s", intercepting ? "neither grabs nor shows its shield" : "intercepts clicks with no popup open", reply);
    int open = count_occurrences(reply, "\"popup\":\"bench\"");
    if (open != open_popups) die("the daemon reports %d bench popups open, expected %d; status: %s", open, open_popups, reply);
    free(reply);
}

/* ---------- X ---------- */

static xcb_connection_t *c;
static xcb_window_t root;

enum { POPUP_X = 100, POPUP_Y = 100, TARGET_X = 500, TARGET_Y = 100, SIDE = 200 };

/* What the bench client has seen of its windows. */
struct seen {
    xcb_window_t target, popup;
    long target_presses, target_releases, popup_presses, popup_releases;
    int64_t last_press_ns; /* when the latest ButtonPress on either window was read */
    xcb_timestamp_t last_press_time; /* and the X server's time in it */
    int popup_mapped;      /* MapNotify seen and no UnmapNotify since */
    long maps;             /* MapNotify events for `popup` */
};
static struct seen seen;

static void x_connect(void) {
    const char *display = getenv("DISPLAY");
    c = xcb_connect(NULL, NULL);
    if (xcb_connection_has_error(c)) die("cannot connect to the X display %s", display ? display : "(DISPLAY unset)");
    root = xcb_setup_roots_iterator(xcb_get_setup(c)).data->root;
    const xcb_query_extension_reply_t *xtest = xcb_get_extension_data(c, &xcb_test_id);
    if (!xtest || !xtest->present) die("the X server has no XTEST extension");
}

/* With `override_redirect`, a window no window manager takes (a menu's, a dropdown's): the
 * daemon ties such windows of one X client to that client's open popup (its family). */
static xcb_window_t make_window_of_kind(int x, int y, const char *class_pair, size_t class_len, int override_redirect) {
    xcb_window_t w = xcb_generate_id(c);
    /* The values in the order of their bits: override-redirect (1 << 9) before the event mask (1 << 11). */
    uint32_t mask = (override_redirect ? XCB_CW_OVERRIDE_REDIRECT : 0) | XCB_CW_EVENT_MASK;
    uint32_t events = XCB_EVENT_MASK_BUTTON_PRESS | XCB_EVENT_MASK_BUTTON_RELEASE | XCB_EVENT_MASK_STRUCTURE_NOTIFY;
    uint32_t values[2] = {1, events};
    xcb_create_window(c, XCB_COPY_FROM_PARENT, w, root, (int16_t)x, (int16_t)y, SIDE, SIDE, 0, XCB_WINDOW_CLASS_INPUT_OUTPUT,
                      XCB_COPY_FROM_PARENT, mask, override_redirect ? values : values + 1);
    xcb_change_property(c, XCB_PROP_MODE_REPLACE, w, XCB_ATOM_WM_CLASS, XCB_ATOM_STRING, 8, (uint32_t)class_len, class_pair);
    return w;
}

static xcb_window_t make_window(int x, int y, const char *class_pair, size_t class_len) {
    return make_window_of_kind(x, y, class_pair, class_len, 0);
}

/* The daemon's config matches WM_CLASS class "BenchPopup"; the target matches nothing. */
static xcb_window_t make_popup(int x, int y) {
    static const char class_pair[] = "bench\0BenchPopup";
    return make_window(x, y, class_pair, sizeof class_pair);
}

static void handle(xcb_generic_event_t *ev) {
    uint8_t type = ev->response_type & 0x7f;
    switch (type) {
    case 0: {
        xcb_generic_error_t *e = (xcb_generic_error_t *)ev;
        die("X error %u on request %u.%u (resource 0x%x)", e->error_code, e->major_code, e->minor_code, e->resource_id);
    }
    case XCB_BUTTON_PRESS: {
        xcb_button_press_event_t *b = (xcb_button_press_event_t *)ev;
        seen.last_press_ns = now_ns();
        seen.last_press_time = b->time;
        if (b->event == seen.target) seen.target_presses++;
        else if (b->event == seen.popup) seen.popup_presses++;
        break;
    }
    case XCB_BUTTON_RELEASE: {
        xcb_button_release_event_t *b = (xcb_button_release_event_t *)ev;
        if (b->event == seen.target) seen.target_releases++;
        else if (b->event == seen.popup) seen.popup_releases++;
        break;
    }
    case XCB_MAP_NOTIFY:
        if (((xcb_map_notify_event_t *)ev)->window == seen.popup) {
            seen.popup_mapped = 1;
            seen.maps++;
        }
        break;
    case XCB_UNMAP_NOTIFY:
        if (((xcb_unmap_notify_event_t *)ev)->window == seen.popup) seen.popup_mapped = 0;
        break;
    default:
        break;
    }
}

/* Reads events until *counter reaches `want` or `timeout_ms` pass without any event;
 * returns whether it got there. */
static int pump_until(long *counter, long want, int timeout_ms) {
    xcb_flush(c);
    int64_t deadline = now_ns() + (int64_t)timeout_ms * 1000000;
    while (*counter < want) {
        xcb_generic_event_t *ev = xcb_poll_for_event(c);
        if (ev) {
            handle(ev);
            free(ev);
            deadline = now_ns() + (int64_t)timeout_ms * 1000000;
            continue;
        }
        if (xcb_connection_has_error(c)) die("lost the X connection");
        struct pollfd p = {.fd = xcb_get_file_descriptor(c), .events = POLLIN};
        int r = poll(&p, 1, ms_left(deadline));
        if (r < 0 && errno == EINTR) continue;
        if (r == 0) return 0;
    }
    return 1;
}

/* Reads events until *counter reaches `want`; fails naming `what` after event_wait_ms without progress. */
static void wait_count(long *counter, long want, const char *what) {
    if (!pump_until(counter, want, event_wait_ms))
        die("timed out after %d ms waiting for %s (%ld of %ld seen)", event_wait_ms, what, *counter, want);
}

static long popup_unmapped_flag(void) { return !seen.popup_mapped; }

/* As wait_count, for a condition that is not a counter: re-tested after every event. */
static void wait_until(long (*done)(void), const char *what) {
    xcb_flush(c);
    int64_t deadline = now_ns() + (int64_t)WAIT_MS * 1000000;
    while (!done()) {
        xcb_generic_event_t *ev = xcb_poll_for_event(c);
        if (ev) {
            handle(ev);
            free(ev);
            continue;
        }
        if (xcb_connection_has_error(c)) die("lost the X connection while waiting for %s", what);
        struct pollfd p = {.fd = xcb_get_file_descriptor(c), .events = POLLIN};
        if (poll(&p, 1, ms_left(deadline)) == 0) die("timed out after %d ms waiting for %s", WAIT_MS, what);
    }
}

static void fake(uint8_t type, uint8_t detail, int16_t x, int16_t y) {
    xcb_test_fake_input(c, type, detail, XCB_CURRENT_TIME, root, x, y, 0);
}

static void move_to(int x, int y) { fake(XCB_MOTION_NOTIFY, 0, (int16_t)x, (int16_t)y); }

/* Each click lands on another pixel of its window (a 10 x 10 grid around the centre): two
 * presses at one pixel within one server millisecond look like one press to the daemon's
 * duplicate check, which would take a shortcut and skew the figure. */
static void move_into(int window_x, int window_y) {
    static unsigned next;
    unsigned spot = next++ % 100;
    move_to(window_x + SIDE / 2 - 45 + (int)(spot % 10) * 10, window_y + SIDE / 2 - 45 + (int)(spot / 10) * 10);
}

/* How long the latest click's press waited before the X server made it (ms): the time the
 * server stamped on it less when it was sent. The server's clock is CLOCK_MONOTONIC in ms
 * (os/utils.c, GetTimeInMillis), as `now_ns`'s: a late press stamped late waited for the
 * server to take the XTest request; one stamped at once waited after, for the grabbing
 * client (the daemon, the reference grabber) and its answer. */
static int64_t last_press_stamp_wait_ms;

/* One full click on the window at (window_x, window_y); returns the press latency in ns, from
 * just before the press is flushed to reading the ButtonPress on the window whose counters are
 * given. The clock starts before the flush: pinned to one CPU, the X server (and a grabbing
 * client) may run inside the write and deliver the press before it returns. */
static int64_t click(int window_x, int window_y, long *presses, long *releases, const char *window) {
    char what[96];
    long want = *presses + 1;
    move_into(window_x, window_y);
    fake(XCB_BUTTON_PRESS, 1, 0, 0);
    int64_t sent = now_ns();
    xcb_flush(c);
    snprintf(what, sizeof what, "the ButtonPress on the %s window", window);
    wait_count(presses, want, what);
    int64_t latency = seen.last_press_ns - sent;
    last_press_stamp_wait_ms = (int32_t)(seen.last_press_time - (uint32_t)(sent / 1000000));
    fake(XCB_BUTTON_RELEASE, 1, 0, 0);
    snprintf(what, sizeof what, "the ButtonRelease on the %s window", window);
    wait_count(releases, *releases + 1, what);
    return latency;
}

static int64_t click_target(const char *what) { return click(TARGET_X, TARGET_Y, &seen.target_presses, &seen.target_releases, what); }
static int64_t click_popup(const char *what) { return click(POPUP_X, POPUP_Y, &seen.popup_presses, &seen.popup_releases, what); }

static void map_popup(int ctl) {
    long maps = seen.maps;
    xcb_map_window(c, seen.popup);
    wait_count(&seen.maps, maps + 1, "the popup's MapNotify");
    if (ctl >= 0) ctl_sync(ctl); /* the daemon has seen it open and grabs */
}

/* After an outside click: whether the daemon dismissed (unmapped) the popup. Asked without
 * a timeout: once the daemon answers sync, its UnmapWindow has been processed, so the
 * UnmapNotify comes before the reply to a round trip made now. A popup left open is
 * unmapped here so the next cycle starts the same way. */
static int dismissed_by_daemon(int ctl) {
    ctl_sync(ctl);
    free(xcb_get_input_focus_reply(c, xcb_get_input_focus(c), NULL));
    for (xcb_generic_event_t *ev; (ev = xcb_poll_for_queued_event(c));) {
        handle(ev);
        free(ev);
    }
    if (!seen.popup_mapped) return 1;
    xcb_unmap_window(c, seen.popup);
    wait_until(popup_unmapped_flag, "the UnmapNotify of the popup the bench unmapped itself");
    ctl_sync(ctl);
    return 0;
}

/* The target and the (unmapped) popup, side by side. */
static void setup_windows(void) {
    static const char target_class[] = "bench\0BenchTarget";
    seen.target = make_window(TARGET_X, TARGET_Y, target_class, sizeof target_class);
    seen.popup = make_popup(POPUP_X, POPUP_Y);
    xcb_map_window(c, seen.target);
    /* A round trip: both windows exist and the target is mapped before the first click. */
    free(xcb_get_input_focus_reply(c, xcb_get_input_focus(c), NULL));
}

/* ---------- processes ---------- */

static int pidfd_of(pid_t pid) {
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (fd < 0) die("pidfd_open(%d): %s (is the process running?)", pid, strerror(errno));
    return fd;
}

/* Waits up to WAIT_MS for the process behind pidfd `fd` to exit, else kills it and fails. */
static void await_exit(int fd, pid_t pid, const char *after) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, WAIT_MS) != 1) {
        kill(pid, SIGKILL);
        die("process %d did not exit within %d ms of %s; killed it", pid, WAIT_MS, after);
    }
    close(fd);
}

/* ---------- the reference grabber ---------- */

/* The least any client can do in clickaway's place: a SYNC passive grab of buttons 1-3 on the
 * root window, every press answered at once with ReplayPointer. It runs in a child process on
 * its own connection and shows what the X server alone costs on the grab path. */
static int reference_alive = -1;  /* closing it tells the grabber to exit */
static int reference_report = -1; /* "ok" once it grabs; the presses it answered when it exits */
static pid_t reference_pid;

enum grabber_kind {
    ON_ROOT,  /* the grab on the root */
    WATCHING, /* also the root's SubstructureNotify, the window events the daemon follows to find
               * popups, read and left */
    SHIELD,   /* the grab on a window over the screen, as clickaway's x11-shield backend */
};

/* The screen minus the point (px, py): at most four rectangles, the input shape of a shield
 * with a pinhole for a press let through. */
static uint32_t around_point(xcb_rectangle_t *r, const xcb_screen_t *screen, int16_t px, int16_t py) {
    uint16_t w = screen->width_in_pixels, h = screen->height_in_pixels;
    uint32_t n = 0;
    if (py > 0) r[n++] = (xcb_rectangle_t){0, 0, w, (uint16_t)py};
    if (px > 0) r[n++] = (xcb_rectangle_t){0, py, (uint16_t)px, 1};
    if (px + 1 < w) r[n++] = (xcb_rectangle_t){(int16_t)(px + 1), py, (uint16_t)(w - px - 1), 1};
    if (py + 1 < h) r[n++] = (xcb_rectangle_t){0, (int16_t)(py + 1), w, (uint16_t)(h - py - 1)};
    return n;
}

/* Sets the shield's input shape to `n` rectangles through `region`. */
static void shape_shield(xcb_connection_t *g, xcb_window_t shield, xcb_xfixes_region_t region, uint32_t n,
                         const xcb_rectangle_t *r) {
    xcb_xfixes_set_region(g, region, n, r);
    xcb_xfixes_set_window_shape_region(g, shield, XCB_SHAPE_SK_INPUT, 0, 0, region);
}

/* The shield's grab: an InputOnly window over the whole screen, mapped above the windows on
 * it, holding a SYNC grab of every button. A press is let through as the daemon does it: a
 * pinhole at its point in the input shape (an XFixes region), ReplayPointer, and the
 * top-level under it asked for (TranslateCoordinates) and asked to be activated
 * (_NET_ACTIVE_WINDOW) once known; the pointer's next EnterNotify on the shield closes the
 * pinhole. */
static xcb_window_t make_shield(xcb_connection_t *g, const xcb_screen_t *screen, int ready) {
    xcb_window_t w = xcb_generate_id(g);
    uint32_t values[] = {1, XCB_EVENT_MASK_ENTER_WINDOW};
    xcb_create_window(g, 0, w, screen->root, 0, 0, screen->width_in_pixels, screen->height_in_pixels, 0,
                      XCB_WINDOW_CLASS_INPUT_ONLY, XCB_COPY_FROM_PARENT, XCB_CW_OVERRIDE_REDIRECT | XCB_CW_EVENT_MASK, values);
    xcb_generic_error_t *e = xcb_request_check(
        g, xcb_grab_button_checked(g, 0, w, XCB_EVENT_MASK_BUTTON_PRESS | XCB_EVENT_MASK_BUTTON_RELEASE,
                                   XCB_GRAB_MODE_SYNC, XCB_GRAB_MODE_ASYNC, XCB_NONE, XCB_NONE, XCB_BUTTON_INDEX_ANY,
                                   XCB_MOD_MASK_ANY));
    if (e) {
        dprintf(ready, "the X server refused the shield's grab (error %u)", e->error_code);
        _exit(1);
    }
    xcb_map_window(g, w);
    return w;
}

__attribute__((noreturn)) static void reference_grabber(int ready, int alive, enum grabber_kind kind) {
    xcb_connection_t *g = xcb_connect(NULL, NULL);
    if (xcb_connection_has_error(g)) {
        dprintf(ready, "cannot connect to the X display");
        _exit(1);
    }
    const xcb_screen_t *screen = xcb_setup_roots_iterator(xcb_get_setup(g)).data;
    xcb_window_t groot = screen->root;
    xcb_window_t shield = XCB_NONE;
    xcb_atom_t active_window = XCB_NONE;
    xcb_xfixes_region_t shape = XCB_NONE;
    if (kind == SHIELD) {
        xcb_xfixes_query_version_reply_t *xfixes = xcb_xfixes_query_version_reply(g, xcb_xfixes_query_version(g, 2, 0), NULL);
        if (!xfixes || xfixes->major_version < 2) {
            dprintf(ready, "the X server has no XFixes 2.0");
            _exit(1);
        }
        free(xfixes);
        shape = xcb_generate_id(g);
        xcb_xfixes_create_region(g, shape, 0, NULL);
        xcb_intern_atom_reply_t *atom = xcb_intern_atom_reply(g, xcb_intern_atom(g, 0, 18, "_NET_ACTIVE_WINDOW"), NULL);
        if (!atom) {
            dprintf(ready, "cannot intern _NET_ACTIVE_WINDOW");
            _exit(1);
        }
        active_window = atom->atom;
        free(atom);
        shield = make_shield(g, screen, ready);
    }
    for (uint8_t button = 1; button <= 3 && kind != SHIELD; button++) {
        xcb_generic_error_t *e = xcb_request_check(
            g, xcb_grab_button_checked(g, 0, groot, XCB_EVENT_MASK_BUTTON_PRESS | XCB_EVENT_MASK_BUTTON_RELEASE,
                                       XCB_GRAB_MODE_SYNC, XCB_GRAB_MODE_ASYNC, XCB_NONE, XCB_NONE, button, 0));
        if (e) {
            dprintf(ready, "the X server refused the grab of button %u (error %u)", button, e->error_code);
            _exit(1);
        }
    }
    if (kind == WATCHING) {
        uint32_t mask = XCB_EVENT_MASK_SUBSTRUCTURE_NOTIFY;
        xcb_generic_error_t *e = xcb_request_check(g, xcb_change_window_attributes_checked(g, groot, XCB_CW_EVENT_MASK, &mask));
        if (e) {
            dprintf(ready, "the X server refused SubstructureNotify on the root (error %u)", e->error_code);
            _exit(1);
        }
    }
    /* A round trip: the shield is mapped (or the grabs taken) before the bench clicks. */
    free(xcb_get_input_focus_reply(g, xcb_get_input_focus(g), NULL));
    dprintf(ready, "ok");
    long presses = 0;
    int activating = 0; /* a TranslateCoordinates in flight */
    xcb_translate_coordinates_cookie_t under = {0};
    xcb_timestamp_t under_time = 0;
    /* An event xcb queued while it looked for the reply below: taken first at the next turn. */
    xcb_generic_event_t *queued = NULL;
    for (;;) {
        xcb_generic_event_t *ev;
        while ((ev = queued ? queued : xcb_poll_for_event(g))) {
            queued = NULL;
            uint8_t type = ev->response_type & 0x7f;
            if (type == XCB_BUTTON_PRESS) {
                xcb_button_press_event_t *press = (xcb_button_press_event_t *)ev;
                presses++;
                if (kind == SHIELD) {
                    xcb_rectangle_t r[4];
                    shape_shield(g, shield, shape, around_point(r, screen, press->root_x, press->root_y), r);
                }
                xcb_allow_events(g, XCB_ALLOW_REPLAY_POINTER, press->time);
                if (kind == SHIELD && !activating) {
                    under = xcb_translate_coordinates(g, groot, groot, press->root_x, press->root_y);
                    under_time = press->time;
                    activating = 1;
                }
                xcb_flush(g);
            } else if (type == XCB_ENTER_NOTIFY && kind == SHIELD) {
                xcb_rectangle_t whole = {0, 0, screen->width_in_pixels, screen->height_in_pixels};
                shape_shield(g, shield, shape, 1, &whole);
            }
            free(ev);
        }
        xcb_translate_coordinates_reply_t *top;
        if (activating && xcb_poll_for_reply(g, under.sequence, (void **)&top, NULL)) {
            activating = 0;
            if (top && top->child != XCB_NONE && top->child != shield) {
                xcb_client_message_event_t m = {.response_type = XCB_CLIENT_MESSAGE, .format = 32, .window = top->child,
                                                .type = active_window, .data.data32 = {2, under_time}};
                xcb_send_event(g, 0, groot, XCB_EVENT_MASK_SUBSTRUCTURE_REDIRECT | XCB_EVENT_MASK_SUBSTRUCTURE_NOTIFY,
                               (const char *)&m);
            }
            free(top);
        }
        xcb_flush(g);
        if (xcb_connection_has_error(g)) _exit(1);
        /* xcb_poll_for_reply reads whatever the socket holds, events too: a press that came
         * with the reply (or before it) is in xcb's queue now, and poll(2) would not wake for
         * it, leaving the pointer frozen under the grab until the bench gave up. */
        if ((queued = xcb_poll_for_queued_event(g))) continue;
        struct pollfd p[2] = {{.fd = xcb_get_file_descriptor(g), .events = POLLIN}, {.fd = alive, .events = POLLIN}};
        if (poll(p, 2, -1) > 0 && p[1].revents) { /* the bench closed its end, or died */
            dprintf(ready, "%ld", presses);
            _exit(0);
        }
    }
}

static void start_reference_grabber(enum grabber_kind kind) {
    int ready[2], alive[2];
    if (pipe2(ready, O_CLOEXEC) != 0 || pipe2(alive, O_CLOEXEC) != 0) die("pipe2: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0) die("fork: %s", strerror(errno));
    if (pid == 0) {
        close(ready[0]);
        close(alive[1]);
        reference_grabber(ready[1], alive[0], kind);
    }
    close(ready[1]);
    close(alive[0]);
    reference_alive = alive[1];
    reference_pid = pid;
    reference_report = ready[0];
    struct pollfd p = {.fd = ready[0], .events = POLLIN};
    if (poll(&p, 1, WAIT_MS) != 1) die("the reference grabber did not grab the buttons within %d ms", WAIT_MS);
    char message[160] = {0};
    if (read(ready[0], message, sizeof message - 1) <= 0 || strcmp(message, "ok") != 0)
        die("the reference grabber failed: %s", message[0] ? message : "it exited");
}

/* Stops the grabber; returns how many presses it answered. */
static long stop_reference_grabber(void) {
    int exited = pidfd_of(reference_pid);
    close(reference_alive);
    await_exit(exited, reference_pid, "closing its pipe");
    int status;
    if (waitpid(reference_pid, &status, 0) != reference_pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        die("the reference grabber failed (status 0x%x)", status);
    char count[32] = {0};
    if (read(reference_report, count, sizeof count - 1) <= 0) die("the reference grabber exited without its count");
    close(reference_report);
    return atol(count);
}

/* ---------- /proc ---------- */

static long proc_status_field(const char *path, const char *field) {
    FILE *f = fopen(path, "r");
    if (!f) die("cannot read %s: %s (did the daemon exit?)", path, strerror(errno));
    char line[256];
    size_t len = strlen(field);
    long value = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, len) == 0 && line[len] == ':') value = strtol(line + len + 1, NULL, 10);
    fclose(f);
    if (value < 0) die("%s has no %s line", path, field);
    return value;
}

static long rss_kb(pid_t pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    return proc_status_field(path, "VmRSS");
}

/* Field `index` (1-based, as in proc(5)) of a stat file, read after the command name. */
static char *stat_field(const char *path, int index, char *buf, size_t size) {
    FILE *f = fopen(path, "r");
    if (!f) die("cannot read %s: %s (did the daemon exit?)", path, strerror(errno));
    char line[1024];
    if (!fgets(line, sizeof line, f)) die("%s is empty", path);
    fclose(f);
    char *p = strrchr(line, ')');
    if (!p) die("%s is malformed", path);
    p += 2; /* field 3 starts here */
    for (int i = 3; i < index; i++) {
        p = strchr(p, ' ');
        if (!p) die("%s has no field %d", path, index);
        p++;
    }
    size_t n = strcspn(p, " \n");
    if (n >= size) n = size - 1;
    memcpy(buf, p, n);
    buf[n] = 0;
    return buf;
}

struct cost {
    long voluntary, involuntary; /* context switches, all threads */
    long long run_ns;            /* time on a CPU, all threads (schedstat) */
    long ticks;                  /* utime + stime, clock ticks */
    int threads;
};

static struct cost read_cost(pid_t pid) {
    struct cost k = {0};
    char dir[64], path[PATH_MAX], buf[32];
    snprintf(dir, sizeof dir, "/proc/%d/task", pid);
    DIR *d = opendir(dir);
    if (!d) die("cannot open %s: %s (did the daemon exit?)", dir, strerror(errno));
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        k.threads++;
        snprintf(path, sizeof path, "%s/%s/status", dir, e->d_name);
        k.voluntary += proc_status_field(path, "voluntary_ctxt_switches");
        k.involuntary += proc_status_field(path, "nonvoluntary_ctxt_switches");
        snprintf(path, sizeof path, "%s/%s/schedstat", dir, e->d_name);
        FILE *f = fopen(path, "r");
        long long run = 0;
        if (f) {
            if (fscanf(f, "%lld", &run) != 1) run = 0;
            fclose(f);
        }
        k.run_ns += run;
    }
    closedir(d);
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    k.ticks = atol(stat_field(path, 14, buf, sizeof buf)) + atol(stat_field(path, 15, buf, sizeof buf));
    return k;
}

/* Waits until the thread of `pid` that answers clicks (its main thread) sleeps, so its last
 * reply's trip back into poll(2) is not counted in a measurement that starts now; the other
 * threads too, unless they stay busy for 100 ms (the loader, while another client reloads
 * in a loop: it frees each replaced configuration after the reply). Bounded. */
static void wait_asleep(pid_t pid) {
    int64_t start = now_ns(), deadline = start + (int64_t)WAIT_MS * 1000000;
    char dir[64], path[PATH_MAX], state[8];
    snprintf(dir, sizeof dir, "/proc/%d/task", pid);
    for (;;) {
        int main_awake = 0, others_awake = 0;
        DIR *d = opendir(dir);
        if (!d) die("cannot open %s: %s (did the daemon exit?)", dir, strerror(errno));
        for (struct dirent *e; (e = readdir(d));) {
            if (e->d_name[0] == '.') continue;
            snprintf(path, sizeof path, "%s/%s/stat", dir, e->d_name);
            if (strcmp(stat_field(path, 3, state, sizeof state), "S") == 0) continue;
            if (atoi(e->d_name) == pid) main_awake = 1; else others_awake = 1;
        }
        closedir(d);
        if (!main_awake && (!others_awake || now_ns() - start > 100 * 1000000LL)) return;
        if (now_ns() > deadline) die("the daemon (pid %d) did not go to sleep within %d ms", pid, WAIT_MS);
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
}

/* The daemon's cost counters once it sleeps; zeros without a daemon (pid 0). */
static struct cost daemon_cost(pid_t pid) {
    struct cost none = {0};
    if (pid <= 0) return none;
    wait_asleep(pid);
    return read_cost(pid);
}

/* ---------- modes ---------- */

static long arg_long(const char *value, const char *name) {
    char *end;
    long v = strtol(value, &end, 10);
    if (*value == 0 || *end != 0 || v < 0) die("%s wants a non-negative number, not \"%s\"", name, value);
    return v;
}

struct options {
    const char *latency_mode;
    long clicks, seconds, popups, runs, inside_per_cycle, in_flight, pace_ms, interval_ms;
    pid_t pid, burst_pid;
    int with_daemon, reference_grabber, override_redirect, and_status;
    enum grabber_kind grabber_kind;
    char *checkpoints;
    const char *log;
    const char *samples;
    const char *notify_socket;
    const char *window_class;
    char **rest; /* after "--" */
};

/* --burst-pid P: `clickbench windows --mode cycle` (pid P) maps its windows when told, right
 * before the first click, and answers once all its maps are written to the X server: every
 * case's clicks meet its burst at the same point, whatever the set-up took and wherever the
 * scheduler put the burst client. */
static void start_burst(pid_t pid) {
    if (pid <= 0) return;
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    if (sigprocmask(SIG_BLOCK, &usr1, NULL) != 0) die("sigprocmask: %s", strerror(errno));
    if (kill(pid, SIGUSR1) != 0) die("cannot start the burst of pid %d: %s", pid, strerror(errno));
    struct timespec wait = {WAIT_MS / 1000, (WAIT_MS % 1000) * 1000000L};
    if (sigtimedwait(&usr1, NULL, &wait) != SIGUSR1)
        die("the burst client (pid %d) did not say within %d ms that its maps were sent", pid, WAIT_MS);
}

/* --pace-ms N: the next press N ms after the last one, or at once if that one took longer
 * (a held press delays the clicks after it, as it would a user's; none are sent to catch up).
 * Unpaced, a block's clicks are over within the first maps of a burst (BENCHMARKS.md); paced
 * as the probe of issue 43 (a press every 20 ms), they span its maps and its unmaps. */
static void pace(int64_t pressed, long pace_ms) {
    if (pace_ms <= 0) return;
    int64_t next = pressed + pace_ms * 1000000;
    struct timespec at = {(time_t)(next / 1000000000), (long)(next % 1000000000)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR) {
    }
}

static int latency(struct options *o) {
    if (o->clicks < 1) die("--clicks must be at least 1");
    x_connect();
    setup_windows();
    if (o->with_daemon && o->reference_grabber) die("--daemon and --reference-grabber exclude each other");
    if (o->grabber_kind != ON_ROOT && !o->reference_grabber) die("--watching-windows and --shield go with --reference-grabber");
    /* The shield is made once the popup is mapped, to be above it, as the daemon's is. */
    int shield_later = o->reference_grabber && o->grabber_kind == SHIELD;
    if (shield_later && strcmp(o->latency_mode, "inside") != 0) die("--shield goes with --mode inside");
    if (o->burst_pid > 0 && strcmp(o->latency_mode, "target") != 0 && strcmp(o->latency_mode, "inside") != 0)
        die("--burst-pid goes with --mode target or inside");
    if (o->pace_ms > 0 && strcmp(o->latency_mode, "target") != 0 && strcmp(o->latency_mode, "inside") != 0)
        die("--pace-ms goes with --mode target or inside");
    if (o->pace_ms > 0) event_wait_ms = 120000;
    int ctl = o->with_daemon ? ctl_connect() : -1;
    if (o->reference_grabber && !shield_later) start_reference_grabber(o->grabber_kind);
    int64_t *samples = calloc((size_t)o->clicks, sizeof *samples);
    int64_t *stamp_waits = calloc((size_t)o->clicks, sizeof *stamp_waits);
    const char *m = o->latency_mode;
    /* --pid: the daemon's wakeups and CPU time over the clicks, counted from /proc. */
    struct cost before = {0}, after = {0};
    long timed = o->clicks, not_dismissed = 0;
    if (strcmp(m, "rtt") == 0) {
        for (long i = 0; i < o->clicks; i++) {
            xcb_get_input_focus_cookie_t cookie = xcb_get_input_focus(c);
            int64_t sent = now_ns();
            xcb_flush(c);
            xcb_get_input_focus_reply_t *r = xcb_get_input_focus_reply(c, cookie, NULL);
            samples[i] = now_ns() - sent;
            if (!r) die("GetInputFocus failed");
            free(r);
        }
    } else if (strcmp(m, "target") == 0) {
        /* Cases 1 and 2: no popup open, so the daemon (if any) must hold no grab. */
        if (ctl >= 0) ctl_expect(ctl, 0, 0);
        before = daemon_cost(o->pid);
        start_burst(o->burst_pid);
        for (long i = 0; i < o->clicks; i++) {
            int64_t pressed = now_ns();
            samples[i] = click_target("target");
            stamp_waits[i] = last_press_stamp_wait_ms;
            pace(pressed, o->pace_ms);
        }
        after = daemon_cost(o->pid);
    } else if (strcmp(m, "inside") == 0) {
        if (ctl < 0 && !o->reference_grabber) die("--mode inside needs --daemon or --reference-grabber");
        map_popup(ctl);
        if (ctl >= 0) ctl_expect(ctl, 1, 1);
        if (shield_later) start_reference_grabber(SHIELD);
        before = daemon_cost(o->pid);
        start_burst(o->burst_pid);
        for (long i = 0; i < o->clicks; i++) {
            int64_t pressed = now_ns();
            samples[i] = click_popup("popup");
            stamp_waits[i] = last_press_stamp_wait_ms;
            pace(pressed, o->pace_ms);
        }
        after = daemon_cost(o->pid);
        if (ctl >= 0) ctl_expect(ctl, 1, 1); /* no inside click dismissed it */
    } else if (strcmp(m, "outside") == 0) {
        if (ctl < 0) die("--mode outside needs --daemon");
        timed = 0;
        /* Only dismissing clicks are case 4: one the daemon let pass is counted, not timed. */
        before = daemon_cost(o->pid);
        for (long i = 0; i < o->clicks; i++) {
            map_popup(ctl);
            if (i == 0) ctl_expect(ctl, 1, 1);
            int64_t latency = click_target("target (outside the popup)");
            if (dismissed_by_daemon(ctl)) samples[timed++] = latency;
            else not_dismissed++;
        }
        after = daemon_cost(o->pid);
        ctl_expect(ctl, 0, 0);
        printf("not_dismissed=%ld ", not_dismissed);
        if (timed == 0) die("none of the %ld outside clicks dismissed the popup", o->clicks);
    } else {
        die("--mode must be target, inside, outside or rtt, not \"%s\"", m);
    }
    if (o->pid > 0) {
        printf("daemon_wakeups=%ld daemon_cpu_ns=%lld ", after.voluntary - before.voluntary, after.run_ns - before.run_ns);
    }
    if (o->reference_grabber) {
        long answered = stop_reference_grabber();
        if (answered != o->clicks) die("the reference grabber answered %ld presses of %ld: the clicks did not all go through its grab", answered, o->clicks);
    }
    if (o->samples) save_samples(o->samples, samples, (size_t)timed);
    /* Beside them, for the clicks on one window: how long each press waited to be made. */
    if (o->samples && (strcmp(m, "target") == 0 || strcmp(m, "inside") == 0)) {
        char path[4096];
        snprintf(path, sizeof path, "%s.stamped", o->samples);
        save_samples(path, stamp_waits, (size_t)timed);
    }
    print_latency(samples, (size_t)timed);
    return 0;
}

static int stats(struct options *o) {
    if (!o->samples) die("--samples FILE is required");
    FILE *f = fopen(o->samples, "r");
    if (!f) die("cannot open %s: %s", o->samples, strerror(errno));
    size_t n = 0, cap = 4096;
    int64_t *samples = malloc(cap * sizeof *samples);
    long long v;
    while (fscanf(f, "%lld", &v) == 1) {
        if (n == cap) samples = realloc(samples, (cap *= 2) * sizeof *samples);
        samples[n++] = v;
    }
    fclose(f);
    if (n == 0) die("%s holds no samples", o->samples);
    print_latency(samples, n);
    return 0;
}

/* A datagram socket at `path` for the daemon's sd_notify messages (NOTIFY_SOCKET). */
static int notify_socket(const char *path) {
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) die("socket: %s", strerror(errno));
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof addr.sun_path) die("the notify socket path %s is too long", path);
    memcpy(addr.sun_path, path, strlen(path) + 1);
    unlink(path);
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0) die("cannot bind %s: %s", path, strerror(errno));
    return fd;
}

/* Reads the notify socket until `deadline`; returns how many messages held `what`. */
static long count_notifications(int fd, int64_t deadline, const char *what) {
    long count = 0;
    for (;;) {
        int wait = ms_left(deadline);
        if (now_ns() >= deadline) return count;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, wait);
        if (r < 0 && errno != EINTR) die("poll: %s", strerror(errno));
        if (r <= 0) continue;
        char message[4096];
        ssize_t n = recv(fd, message, sizeof message - 1, 0);
        if (n <= 0) continue;
        message[n] = 0;
        if (strstr(message, what)) count++;
    }
}

static int idle(struct options *o) {
    if (o->pid <= 0) die("--pid is required");
    x_connect();
    int ctl = ctl_connect();
    xcb_window_t windows[16];
    if (o->popups < 1 || o->popups > 16) die("--popups must be 1..16");
    for (long i = 0; i < o->popups; i++) {
        windows[i] = make_popup(20 + (int)i * 220, 400);
        seen.popup = windows[i];
        long maps = seen.maps;
        xcb_map_window(c, windows[i]);
        wait_count(&seen.maps, maps + 1, "a popup's MapNotify");
    }
    /* --notify-socket: the daemon runs with NOTIFY_SOCKET there and a watchdog; its pings are counted. */
    int notify = o->notify_socket ? notify_socket(o->notify_socket) : -1;
    ctl_sync(ctl);
    ctl_expect(ctl, 1, (int)o->popups);
    wait_asleep(o->pid);
    struct cost before = read_cost(o->pid);
    int64_t start = now_ns();
    long pings = 0;
    if (notify >= 0) {
        pings = count_notifications(notify, start + o->seconds * 1000000000LL, "WATCHDOG=1");
    } else {
        struct timespec span = {o->seconds, 0};
        while (nanosleep(&span, &span) != 0 && errno == EINTR) {}
    }
    struct cost after = read_cost(o->pid);
    double elapsed = (now_ns() - start) / 1e9;
    ctl_expect(ctl, 1, (int)o->popups); /* still open, still grabbing: the idle state was the real one */
    if (notify >= 0) printf("watchdog_pings=%ld ", pings);
    printf("seconds=%.1f threads=%d voluntary=%ld involuntary=%ld cpu_ms=%.3f cpu_ticks=%ld\n", elapsed, after.threads,
           after.voluntary - before.voluntary, after.involuntary - before.involuntary,
           (after.run_ns - before.run_ns) / 1e6, after.ticks - before.ticks);
    return 0;
}

static int memory(struct options *o) {
    if (o->pid <= 0) die("--pid is required");
    x_connect();
    setup_windows();
    int ctl = ctl_connect();
    long clicks = 0, not_dismissed = 0;
    char *list = o->checkpoints, *save = NULL;
    ctl_sync(ctl);
    printf("rss_kb_at_0=%ld\n", rss_kb(o->pid));
    fflush(stdout);
    for (char *cp = strtok_r(list, ",", &save); cp; cp = strtok_r(NULL, ",", &save)) {
        long checkpoint = arg_long(cp, "--checkpoints");
        while (clicks < checkpoint) {
            /* A new popup window each cycle: created, opened, clicked inside, dismissed, destroyed. */
            seen.popup = make_popup(POPUP_X, POPUP_Y);
            seen.popup_mapped = 0;
            map_popup(ctl);
            for (long k = 0; k < o->inside_per_cycle && clicks < checkpoint - 1; k++, clicks++) click_popup("popup");
            click_target("target (outside the popup)");
            clicks++;
            if (!dismissed_by_daemon(ctl)) not_dismissed++;
            xcb_destroy_window(c, seen.popup);
        }
        ctl_sync(ctl);
        printf("rss_kb_at_%ld=%ld\n", clicks, rss_kb(o->pid));
        fflush(stdout);
    }
    printf("not_dismissed=%ld\n", not_dismissed);
    return 0;
}

static const char *grab_status_name(uint8_t s) {
    switch (s) {
    case XCB_GRAB_STATUS_SUCCESS: return "Success";
    case XCB_GRAB_STATUS_ALREADY_GRABBED: return "AlreadyGrabbed";
    case XCB_GRAB_STATUS_INVALID_TIME: return "InvalidTime";
    case XCB_GRAB_STATUS_NOT_VIEWABLE: return "NotViewable";
    case XCB_GRAB_STATUS_FROZEN: return "Frozen";
    default: return "unknown";
    }
}

static int burst(struct options *o) {
    if (o->clicks < 1) die("--clicks must be at least 1");
    x_connect();
    setup_windows();
    if (o->with_daemon && o->reference_grabber) die("--daemon and --reference-grabber exclude each other");
    int ctl = o->with_daemon ? ctl_connect() : -1;
    if (o->grabber_kind == SHIELD) die("--shield goes with latency --mode inside");
    if (o->reference_grabber) start_reference_grabber(o->grabber_kind);
    map_popup(ctl);
    if (ctl >= 0) ctl_expect(ctl, 1, 1);
    free(xcb_get_input_focus_reply(c, xcb_get_input_focus(c), NULL));
    int64_t start = now_ns();
    for (long i = 0; i < o->clicks; i++) {
        /* --in-flight N: at most N presses sent and not yet seen; 0: no limit. A lost press
         * ends the pacing (the wait times out) and the rest go out unpaced. */
        if (o->in_flight > 0 && i - seen.popup_presses >= o->in_flight)
            pump_until(&seen.popup_presses, i - o->in_flight + 1, WAIT_MS);
        move_into(POPUP_X, POPUP_Y);
        fake(XCB_BUTTON_PRESS, 1, 0, 0);
        fake(XCB_BUTTON_RELEASE, 1, 0, 0);
    }
    /* Count what arrives; stop when all did or when nothing arrives for WAIT_MS. */
    pump_until(&seen.popup_releases, o->clicks, WAIT_MS);
    double seconds = (seen.last_press_ns - start) / 1e9; /* to the last press that arrived */
    /* Stuck? Another client must be able to grab the pointer, and one more click must get through. */
    xcb_connection_t *other = xcb_connect(NULL, NULL);
    if (xcb_connection_has_error(other)) die("cannot open a second X connection");
    xcb_window_t other_root = xcb_setup_roots_iterator(xcb_get_setup(other)).data->root;
    xcb_grab_pointer_reply_t *g = xcb_grab_pointer_reply(
        other, xcb_grab_pointer(other, 0, other_root, 0, XCB_GRAB_MODE_ASYNC, XCB_GRAB_MODE_ASYNC, XCB_NONE, XCB_NONE, XCB_CURRENT_TIME), NULL);
    if (!g) die("GrabPointer from a second connection failed");
    const char *grab = grab_status_name(g->status);
    int stuck = g->status != XCB_GRAB_STATUS_SUCCESS;
    free(g);
    xcb_ungrab_pointer(other, XCB_CURRENT_TIME);
    free(xcb_get_input_focus_reply(other, xcb_get_input_focus(other), NULL));
    xcb_disconnect(other);
    long final_presses = seen.popup_presses;
    int final_click = 0;
    if (!stuck) {
        click_popup("popup (the click after the burst)");
        final_click = seen.popup_presses == final_presses + 1;
    }
    if (ctl >= 0) ctl_sync(ctl);
    if (o->reference_grabber) printf("grabber_answered=%ld ", stop_reference_grabber() - final_click);
    printf("sent=%ld pressed=%ld released=%ld seconds=%.3f clicks_per_s=%.0f grab_pointer=%s final_click=%s\n", o->clicks,
           final_presses, seen.popup_releases - final_click, seconds, final_presses / (seconds > 0 ? seconds : 1), grab,
           final_click ? "delivered" : "lost");
    return 0;
}


/* Waits for the control socket of daemon `pid` to answer sync; returns the connected fd.
 * Driven by inotify on the socket's directory and a pidfd for the daemon's exit. */
static int await_ready(pid_t pid, int64_t deadline) {
    ctl_paths();
    if (mkdir(ctl_dir, 0700) != 0 && errno != EEXIST) die("cannot create %s: %s", ctl_dir, strerror(errno));
    /* One inotify instance for the whole process: closing one waits for an RCU grace period
     * (milliseconds), which would land inside the start-up figure. */
    static int in = -1;
    if (in < 0) {
        in = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        if (in < 0) die("inotify_init1: %s", strerror(errno));
        /* bind(2) creates the socket (IN_CREATE) before listen(2); the daemon's chmod after
         * listen (IN_ATTRIB) is the next chance to connect. */
        if (inotify_add_watch(in, ctl_dir, IN_CREATE | IN_ATTRIB | IN_MOVED_TO) < 0)
            die("cannot watch %s: %s", ctl_dir, strerror(errno));
    }
    int exited = pidfd_of(pid);
    int fd;
    for (;;) {
        fd = ctl_try_connect(); /* tried after the watch exists, so no creation goes unseen */
        if (fd >= 0) break;
        if (errno != ENOENT && errno != ECONNREFUSED) die("cannot connect to %s: %s", ctl_path, strerror(errno));
        struct pollfd p[2] = {{.fd = in, .events = POLLIN}, {.fd = exited, .events = POLLIN}};
        int r = poll(p, 2, ms_left(deadline));
        if (r < 0 && errno == EINTR) continue;
        if (r == 0) die("the daemon's control socket %s did not answer within %d ms", ctl_path, WAIT_MS);
        if (p[1].revents) die("the daemon (pid %d) exited before its control socket answered; see its log", pid);
        char buf[4096];
        while (read(in, buf, sizeof buf) > 0) {}
    }
    close(exited);
    ctl_sync(fd);
    return fd;
}

static int wait_ready(struct options *o) {
    if (o->pid <= 0) die("--pid is required");
    close(await_ready(o->pid, now_ns() + (int64_t)WAIT_MS * 1000000));
    return 0;
}

/* SIGTERM, then waits (bounded) for the process to exit; the caller reaps it. */
static void terminate(pid_t pid) {
    int fd = pidfd_of(pid);
    if (kill(pid, SIGTERM) != 0) die("kill %d: %s", pid, strerror(errno));
    await_exit(fd, pid, "SIGTERM");
}

static int stop(struct options *o) {
    if (o->pid <= 0) die("--pid is required");
    terminate(o->pid);
    return 0;
}

static int startup(struct options *o) {
    if (!o->rest || !o->rest[0]) die("give the daemon command after --");
    if (o->runs < 1) die("--runs must be at least 1");
    if (!o->log) die("--log FILE is required: the daemon's stderr goes there");
    ctl_paths();
    posix_spawn_file_actions_t log_to_file;
    posix_spawn_file_actions_init(&log_to_file);
    posix_spawn_file_actions_addopen(&log_to_file, 2, o->log, O_WRONLY | O_APPEND | O_CREAT, 0600);
    /* The daemon tells READY=1 on NOTIFY_SOCKET (as under systemd) and answers sync: both timed. */
    char notify_path[PATH_MAX];
    snprintf(notify_path, sizeof notify_path, "%s/bench-notify.sock", getenv("XDG_RUNTIME_DIR"));
    int notify = notify_socket(notify_path);
    setenv("NOTIFY_SOCKET", notify_path, 1);
    int64_t *samples = calloc((size_t)o->runs, sizeof *samples);
    int64_t *ready_samples = calloc((size_t)o->runs, sizeof *ready_samples);
    for (long i = 0; i < o->runs; i++) {
        unlink(ctl_path); /* a previous run's socket must not answer for this one */
        pid_t pid;
        int64_t start = now_ns();
        int e = posix_spawn(&pid, o->rest[0], &log_to_file, NULL, o->rest, environ);
        if (e != 0) die("cannot start %s: %s", o->rest[0], strerror(e));
        own_child = pid;
        int exited = pidfd_of(pid);
        for (;;) {
            struct pollfd p[2] = {{.fd = notify, .events = POLLIN}, {.fd = exited, .events = POLLIN}};
            int r = poll(p, 2, ms_left(start + (int64_t)WAIT_MS * 1000000));
            if (r < 0 && errno == EINTR) continue;
            if (r == 0) die("the daemon did not send READY=1 to NOTIFY_SOCKET within %d ms", WAIT_MS);
            if (p[1].revents) die("the daemon (pid %d) exited before it was ready; see its log", pid);
            char message[4096];
            ssize_t n = recv(notify, message, sizeof message - 1, 0);
            if (n <= 0) continue;
            message[n] = 0;
            if (strncmp(message, "READY=1", 7) == 0 || strstr(message, "\nREADY=1")) break;
        }
        ready_samples[i] = now_ns() - start;
        close(exited);
        int fd = await_ready(pid, start + (int64_t)WAIT_MS * 1000000);
        samples[i] = now_ns() - start;
        close(fd);
        terminate(pid);
        int status;
        waitpid(pid, &status, 0);
        own_child = 0;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) die("the daemon exited with status 0x%x after SIGTERM", status);
    }
    qsort(ready_samples, (size_t)o->runs, sizeof *ready_samples, cmp_i64);
    printf("ready_p50_us=%.1f ready_max_us=%.1f ", percentile(ready_samples, (size_t)o->runs, 50) / 1e3,
           ready_samples[o->runs - 1] / 1e3);
    print_latency(samples, (size_t)o->runs);
    unlink(notify_path);
    return 0;
}

/* SIGTERM to the loops that run beside the clicks (reload, windows, openpid): they finish
 * what they have in flight, clean up and exit, so that once the process is gone the daemon
 * and the X server are done with it. */
static volatile sig_atomic_t stop_requested;
static void on_term(int sig) { (void)sig; stop_requested = 1; }

static int reload(struct options *o) {
    if (o->pid <= 0) die("--pid is required");
    if (o->runs < 1) die("--runs must be at least 1");
    /* SIGTERM ends the loop once the reload in flight is answered (the daemon is done with it). */
    signal(SIGTERM, on_term);
    int ctl = ctl_connect();
    int64_t *samples = calloc((size_t)o->runs, sizeof *samples);
    long done = 0;
    for (; done < o->runs && !stop_requested; done++) {
        /* The daemon answers once the new configuration is in place (or rejected). */
        int64_t start = now_ns();
        char *reply = ctl_request(ctl, "{\"request\":\"reload\"}");
        samples[done] = now_ns() - start;
        if (strncmp(reply, "{\"ok\":true", 10) != 0) die("reload answered %s", reply);
        free(reply);
    }
    if (done == 0) die("no reload was answered before SIGTERM");
    print_latency(samples, (size_t)done);
    return 0;
}

/* A round trip for the window loops: afterwards the X server has done every request sent
 * before it. The events the windows bring (StructureNotify) are dropped; an error ends the run. */
static void loop_round_trip(void) {
    free(xcb_get_input_focus_reply(c, xcb_get_input_focus(c), NULL));
    if (xcb_connection_has_error(c)) die("lost the X connection");
    for (xcb_generic_event_t *ev; (ev = xcb_poll_for_queued_event(c));) {
        if ((ev->response_type & 0x7f) == 0) handle(ev); /* dies naming the error */
        free(ev);
    }
}

static int term_pending(void) {
    sigset_t pending;
    sigpending(&pending);
    return sigismember(&pending, SIGTERM);
}

/* Another client's windows while clicks are measured: `--popups N` windows of WM_CLASS
 * "burst"/CLASS away from the bench windows (override-redirect with --override-redirect),
 * mapped and unmapped in a loop (`cycle`) or
 * mapped once (`keep`), until SIGTERM. It says on stdout when the clicks may start: in cycle
 * mode `ready` once its windows exist (the loop starts on SIGUSR1, which `latency
 * --burst-pid` sends right before its first click, and the sender gets SIGUSR1 back once the
 * first maps are written), in keep mode `mapped` once the X server has mapped them all (a
 * round trip after the maps). On SIGTERM (looked for between batches of maps and unmaps) it
 * destroys its windows and makes a round trip before it exits, so that when the process is
 * gone the X server is done with them; then it prints the batches of maps and unmaps the
 * server finished (`maps=1 unmaps=0` in cycle mode: SIGTERM came while the server still
 * worked on the first maps). */
static int windows(struct options *o) {
    if (o->popups < 1) die("--popups must be at least 1");
    int cycle = strcmp(o->latency_mode, "cycle") == 0;
    if (!cycle && strcmp(o->latency_mode, "keep") != 0) die("--mode must be cycle or keep, not \"%s\"", o->latency_mode);
    /* Blocked, so they are taken only where this loop looks for them: no handler races a wait. */
    sigset_t term, start_or_term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    start_or_term = term;
    sigaddset(&start_or_term, SIGUSR1);
    if (sigprocmask(SIG_BLOCK, &start_or_term, NULL) != 0) die("sigprocmask: %s", strerror(errno));
    x_connect();
    char class_pair[256];
    int len = snprintf(class_pair, sizeof class_pair, "burst%c%s", 0, o->window_class ? o->window_class : "Burst");
    xcb_window_t *ws = calloc((size_t)o->popups, sizeof *ws);
    /* All from this one connection: with --override-redirect, one program's menus as the
     * daemon sees them (one X client), each matching the popup its class matches. */
    for (long i = 0; i < o->popups; i++)
        ws[i] = make_window_of_kind(900 + (int)(i % 50), 700 + (int)(i % 40), class_pair, (size_t)len + 1, o->override_redirect);
    loop_round_trip();
    long maps = 0, unmaps = 0;
    int sig = 0;
    pid_t starter = 0;
    if (cycle) {
        puts("ready");
        siginfo_t info = {0};
        do sig = sigwaitinfo(&start_or_term, &info);
        while (sig < 0 && errno == EINTR);
        if (sig < 0) die("sigwaitinfo: %s", strerror(errno));
        if (sig == SIGUSR1) starter = info.si_pid;
    }
    while (sig != SIGTERM) {
        for (long i = 0; i < o->popups; i++) xcb_map_window(c, ws[i]);
        xcb_flush(c);
        /* The maps are with the X server (in its socket): the clicks may start. */
        if (starter > 0 && kill(starter, SIGUSR1) != 0) die("cannot answer pid %d: %s", starter, strerror(errno));
        starter = 0;
        loop_round_trip();
        maps++;
        if (!cycle) {
            puts("mapped");
            sigwait(&term, &sig);
            break;
        }
        if (term_pending()) break;
        for (long i = 0; i < o->popups; i++) xcb_unmap_window(c, ws[i]);
        loop_round_trip();
        unmaps++;
        if (term_pending()) break;
    }
    for (long i = 0; i < o->popups; i++) xcb_destroy_window(c, ws[i]);
    loop_round_trip();
    printf("maps=%ld unmaps=%ld\n", maps, unmaps);
    return 0;
}

/* `clickawayctl open --pid` in a loop, as `wait` (the popup goes with the connection): a
 * window of this process (_NET_WM_PID), then `--runs` times (or until SIGTERM) a runtime
 * popup for this pid, timed to its reply (the daemon has found the window), and the
 * connection closed (the popup removed). The popup's grace keeps clicks elsewhere from
 * dismissing it. Says `mapped` on stdout once its window is on screen; on SIGTERM it ends
 * after the request in flight and destroys its window (a round trip) before it exits. */
static int openpid(struct options *o) {
    if (o->runs < 1) die("--runs must be at least 1");
    signal(SIGTERM, on_term);
    x_connect();
    static const char class_pair[] = "opener\0Opener";
    xcb_window_t w = make_window(1000, 100, class_pair, sizeof class_pair);
    xcb_intern_atom_reply_t *a = xcb_intern_atom_reply(c, xcb_intern_atom(c, 0, 11, "_NET_WM_PID"), NULL);
    if (!a) die("cannot intern _NET_WM_PID");
    uint32_t pid = (uint32_t)getpid();
    xcb_change_property(c, XCB_PROP_MODE_REPLACE, w, a->atom, XCB_ATOM_CARDINAL, 32, 1, &pid);
    free(a);
    xcb_map_window(c, w);
    loop_round_trip();
    puts("mapped"); /* the window is on screen: the bench may start its clicks */
    /* Not a literal starting with {"request": the pid is written in at run time. */
    char request[200];
    snprintf(request, sizeof request, "{\"pid\":%ld,\"grace_ms\":3600000,\"timeout_ms\":5000,\"request\":\"wait\"}", (long)pid);
    int64_t *samples = calloc((size_t)o->runs, sizeof *samples);
    long done = 0;
    for (; done < o->runs && !stop_requested; done++) {
        int ctl = ctl_connect();
        int64_t start = now_ns();
        char *reply = ctl_request(ctl, request);
        samples[done] = now_ns() - start;
        if (strncmp(reply, "{\"ok\":true", 10) != 0) die("wait --pid answered %s", reply);
        free(reply);
        close(ctl);
    }
    if (done == 0) die("no runtime popup was registered before SIGTERM");
    xcb_destroy_window(c, w); /* done with at the X server before this process is gone */
    loop_round_trip();
    print_latency(samples, (size_t)done);
    return 0;
}

/* A command run again and again beside the clicks (bench/run: `clickawayctl status` during a
 * burst, issue 43), `--interval-ms` after each ended, until SIGTERM: each run timed from its
 * spawn to its exit, as a user waits for it (its start-up included). Its stdout is dropped.
 * A run that fails (exit status not 0: `clickawayctl` gave up on the daemon) is counted, and
 * timed too. With --and-status, each run is followed by a status request of its own on a new
 * connection to the control socket, timed from connect to reply: the daemon's part of the
 * wait, apart from the command's start-up, which a loaded machine stretches (its samples go
 * to FILE.daemon, its figures are the daemon_ ones). On SIGTERM it lets the run in flight
 * finish, then prints its figures. */
static int repeat(struct options *o) {
    if (!o->rest || !o->rest[0]) die("the command to repeat goes after --");
    if (o->interval_ms < 1) die("--interval-ms must be at least 1");
    signal(SIGTERM, on_term);
    /* A stalled daemon is what the loop is there to see (issue 43), not a failure. */
    event_wait_ms = 120000;
    posix_spawn_file_actions_t quiet;
    posix_spawn_file_actions_init(&quiet);
    posix_spawn_file_actions_addopen(&quiet, 1, "/dev/null", O_WRONLY, 0);
    size_t cap = 1024, n = 0;
    int64_t *samples = malloc(cap * sizeof *samples), *answers = malloc(cap * sizeof *answers);
    long failed = 0;
    while (!stop_requested) {
        pid_t pid;
        int64_t start = now_ns();
        int e = posix_spawn(&pid, o->rest[0], &quiet, NULL, o->rest, environ);
        if (e != 0) die("cannot start %s: %s", o->rest[0], strerror(e));
        int status;
        while (waitpid(pid, &status, 0) < 0)
            if (errno != EINTR) die("waitpid: %s", strerror(errno));
        if (n == cap) {
            samples = realloc(samples, (cap *= 2) * sizeof *samples);
            answers = realloc(answers, cap * sizeof *answers);
        }
        samples[n] = now_ns() - start;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed++;
        if (o->and_status) {
            start = now_ns();
            int ctl = ctl_connect();
            free(ctl_request(ctl, "{\"request\":\"status\"}"));
            answers[n] = now_ns() - start;
            close(ctl);
        }
        n++;
        /* SIGTERM cuts the pause short (no SA_RESTART for nanosleep). */
        struct timespec pause = {o->interval_ms / 1000, (o->interval_ms % 1000) * 1000000L};
        if (!stop_requested) nanosleep(&pause, NULL);
    }
    if (n == 0) die("%s never ran before SIGTERM", o->rest[0]);
    if (o->samples) save_samples(o->samples, samples, n);
    if (o->and_status) {
        if (o->samples) {
            char path[PATH_MAX];
            snprintf(path, sizeof path, "%s.daemon", o->samples);
            save_samples(path, answers, n);
        }
        qsort(answers, n, sizeof *answers, cmp_i64);
        printf("daemon_p50_us=%.1f daemon_max_us=%.1f ", percentile(answers, n, 50) / 1e3, answers[n - 1] / 1e3);
    }
    printf("failed=%ld ", failed);
    print_latency(samples, n);
    return 0;
}

static void usage(void) {
    fputs("usage: clickbench latency --mode target|inside|outside|rtt --clicks N [--daemon [--pid P]|--reference-grabber\n"
          "                         [--watching-windows|--shield]] [--samples FILE] [--burst-pid P] [--pace-ms N]\n"
          "       clickbench stats --samples FILE\n"
          "       clickbench idle --pid P --seconds S --popups N [--notify-socket PATH]\n"
          "       clickbench memory --pid P --checkpoints A,B,... [--inside-per-cycle K]\n"
          "       clickbench burst --clicks N [--in-flight N] [--daemon|--reference-grabber]\n"
          "       clickbench wait-ready --pid P\n"
          "       clickbench startup --runs N --log FILE -- DAEMON ARGS...\n"
          "       clickbench stop --pid P\n"
          "       clickbench reload --pid P --runs N\n"
          "       clickbench windows --popups N --mode cycle|keep [--class CLASS] [--override-redirect]\n"
          "       clickbench openpid --runs N\n"
          "       clickbench repeat --interval-ms N [--samples FILE] [--and-status] -- COMMAND ARGS...\n",
          stderr);
    exit(2);
}

int main(int argc, char **argv) {
    if (argc < 2) usage();
    mode_name = argv[1];
    struct options o = {.latency_mode = "", .clicks = 2000, .seconds = 30, .popups = 3, .runs = 10, .inside_per_cycle = 9,
                        .checkpoints = ""};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            o.rest = argv + i + 1;
            break;
        }
        if (strcmp(a, "--daemon") == 0) {
            o.with_daemon = 1;
            continue;
        }
        if (strcmp(a, "--reference-grabber") == 0) {
            o.reference_grabber = 1;
            continue;
        }
        if (strcmp(a, "--watching-windows") == 0) {
            o.grabber_kind = WATCHING;
            continue;
        }
        if (strcmp(a, "--shield") == 0) {
            o.grabber_kind = SHIELD;
            continue;
        }
        if (strcmp(a, "--override-redirect") == 0) {
            o.override_redirect = 1;
            continue;
        }
        if (strcmp(a, "--and-status") == 0) {
            o.and_status = 1;
            continue;
        }
        if (i + 1 >= argc) die("%s needs a value", a);
        const char *v = argv[++i];
        if (strcmp(a, "--mode") == 0) o.latency_mode = v;
        else if (strcmp(a, "--clicks") == 0) o.clicks = arg_long(v, a);
        else if (strcmp(a, "--seconds") == 0) o.seconds = arg_long(v, a);
        else if (strcmp(a, "--popups") == 0) o.popups = arg_long(v, a);
        else if (strcmp(a, "--runs") == 0) o.runs = arg_long(v, a);
        else if (strcmp(a, "--in-flight") == 0) o.in_flight = arg_long(v, a);
        else if (strcmp(a, "--pace-ms") == 0) o.pace_ms = arg_long(v, a);
        else if (strcmp(a, "--interval-ms") == 0) o.interval_ms = arg_long(v, a);
        else if (strcmp(a, "--inside-per-cycle") == 0) o.inside_per_cycle = arg_long(v, a);
        else if (strcmp(a, "--pid") == 0) o.pid = (pid_t)arg_long(v, a);
        else if (strcmp(a, "--burst-pid") == 0) o.burst_pid = (pid_t)arg_long(v, a);
        else if (strcmp(a, "--checkpoints") == 0) o.checkpoints = argv[i];
        else if (strcmp(a, "--log") == 0) o.log = v;
        else if (strcmp(a, "--samples") == 0) o.samples = v;
        else if (strcmp(a, "--notify-socket") == 0) o.notify_socket = v;
        else if (strcmp(a, "--class") == 0) o.window_class = v;
        else die("unknown option %s", a);
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(mode_name, "latency") == 0) return latency(&o);
    if (strcmp(mode_name, "idle") == 0) return idle(&o);
    if (strcmp(mode_name, "memory") == 0) return memory(&o);
    if (strcmp(mode_name, "burst") == 0) return burst(&o);
    if (strcmp(mode_name, "wait-ready") == 0) return wait_ready(&o);
    if (strcmp(mode_name, "startup") == 0) return startup(&o);
    if (strcmp(mode_name, "reload") == 0) return reload(&o);
    if (strcmp(mode_name, "stop") == 0) return stop(&o);
    if (strcmp(mode_name, "stats") == 0) return stats(&o);
    if (strcmp(mode_name, "windows") == 0) return windows(&o);
    if (strcmp(mode_name, "openpid") == 0) return openpid(&o);
    if (strcmp(mode_name, "repeat") == 0) return repeat(&o);
    usage();
}
