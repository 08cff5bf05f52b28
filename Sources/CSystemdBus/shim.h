#ifndef CLICKAWAY_CSYSTEMDBUS_SHIM_H
#define CLICKAWAY_CSYSTEMDBUS_SHIM_H

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

// sd-bus's variadic calls (sd_bus_call_method, sd_bus_reply_method_return, sd_bus_message_read)
// cannot be called from Swift; these do the same with at most two string arguments. Each frees
// what it made and copies out what the caller keeps (strdup: the caller frees).
//
// libsystemd is opened when the first connection is made, which only KWin's window source
// does: a daemon on X11 or sway never maps it and the libraries it brings (libgcrypt, liblzma,
// libzstd, liblz4, libcap: 0.75 MB resident). The header gives the functions' types only.

#define CSDBUS_FUNCTIONS(X) \
    X(sd_bus_new) X(sd_bus_set_address) X(sd_bus_set_bus_client) X(sd_bus_set_description) X(sd_bus_start) \
    X(sd_bus_unref) X(sd_bus_flush_close_unref) X(sd_bus_get_fd) X(sd_bus_get_events) X(sd_bus_process) \
    X(sd_bus_get_unique_name) X(sd_bus_add_object) X(sd_bus_slot_unref) X(sd_bus_call) X(sd_bus_send) \
    X(sd_bus_message_new_method_call) X(sd_bus_message_new_method_return) X(sd_bus_message_append_basic) \
    X(sd_bus_message_peek_type) X(sd_bus_message_read_basic) X(sd_bus_message_set_expect_reply) \
    X(sd_bus_message_get_member) X(sd_bus_message_is_method_call) \
    X(sd_bus_message_ref) X(sd_bus_message_unref) X(sd_bus_reply_method_error) X(sd_bus_error_is_set) \
    X(sd_bus_error_free) X(sd_bus_request_name) X(sd_bus_release_name) X(sd_bus_add_match) \
    X(sd_bus_message_enter_container) X(sd_bus_message_exit_container) X(sd_bus_message_skip) \
    X(sd_bus_message_get_sender) X(sd_bus_message_is_signal)

typedef struct {
#define CSDBUS_FIELD(name) __typeof__(&name) name;
    CSDBUS_FUNCTIONS(CSDBUS_FIELD)
#undef CSDBUS_FIELD
} csdbus_library;

// libsystemd's functions, looked up once; NULL with `*error` (dlerror's text) when it cannot be.
static inline const csdbus_library *csdbus_load(const char **error) {
    static csdbus_library library;
    static int state;  // 0 not tried, 1 loaded, -1 failed
    static char failure[256];
    if (state == 0) {
        void *handle = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
        state = handle ? 1 : -1;
#define CSDBUS_LOOKUP(name) \
        if (state == 1 && !(library.name = (__typeof__(&name))dlsym(handle, #name))) state = -1;
        CSDBUS_FUNCTIONS(CSDBUS_LOOKUP)
#undef CSDBUS_LOOKUP
        if (state == -1) {
            const char *why = dlerror();
            strncpy(failure, why ? why : "libsystemd.so.0 lacks a function of sd-bus", sizeof failure - 1);
        }
    }
    if (state == 1) return &library;
    if (error) *error = failure;
    return NULL;
}

// The library, for the calls below: they are only reached through a connection, which
// `csdbus_open` made after loading it.
static inline const csdbus_library *csdbus(void) { return csdbus_load(NULL); }

// A client connection to the bus at `address` (a D-Bus address: unix:path=...), started: the
// socket is connected and the handshake goes on as the connection is processed.
// Without libsystemd, -ELIBACC and `*error` says why.
static inline int csdbus_open(const char *address, const char *description, sd_bus **out, const char **error) {
    if (!csdbus_load(error)) return -ELIBACC;
    sd_bus *bus = NULL;
    int r = csdbus()->sd_bus_new(&bus);
    if (r < 0) return r;
    if ((r = csdbus()->sd_bus_set_address(bus, address)) < 0 || (r = csdbus()->sd_bus_set_bus_client(bus, 1)) < 0
        || (r = csdbus()->sd_bus_set_description(bus, description)) < 0 || (r = csdbus()->sd_bus_start(bus)) < 0) {
        csdbus()->sd_bus_unref(bus);
        return r;
    }
    *out = bus;
    return 0;
}

// Calls `member` with `arguments` strings (0, 1 or 2) and waits at most `usec` for the reply.
// On success copies the reply's first value when it is a string (`*text`), an int32, uint32
// or boolean (`*number`); on a D-Bus error copies its name and message (`*error`, "name: message").
static inline int csdbus_call(sd_bus *bus, const char *destination, const char *path, const char *interface,
                              const char *member, int arguments, const char *first, const char *second, uint64_t usec,
                              char **text, int64_t *number, char **error) {
    sd_bus_message *call = NULL, *reply = NULL;
    sd_bus_error failure = SD_BUS_ERROR_NULL;
    *text = NULL;
    *error = NULL;
    int r = csdbus()->sd_bus_message_new_method_call(bus, &call, destination, path, interface, member);
    if (r < 0) return r;
    if (arguments > 0 && (r = csdbus()->sd_bus_message_append_basic(call, 's', first)) < 0) goto done;
    if (arguments > 1 && (r = csdbus()->sd_bus_message_append_basic(call, 's', second)) < 0) goto done;
    r = csdbus()->sd_bus_call(bus, call, usec, &failure, &reply);
    if (r < 0) {
        if (csdbus()->sd_bus_error_is_set(&failure)) {
            size_t length = strlen(failure.name) + 2 + (failure.message ? strlen(failure.message) : 0) + 1;
            *error = malloc(length);
            if (*error) {
                strcpy(*error, failure.name);
                strcat(*error, ": ");
                if (failure.message) strcat(*error, failure.message);
            }
        }
        goto done;
    }
    char type = 0;
    const char *contents = NULL;
    if (csdbus()->sd_bus_message_peek_type(reply, &type, &contents) > 0) {
        if (type == 's') {
            const char *value = NULL;
            if (csdbus()->sd_bus_message_read_basic(reply, 's', &value) > 0 && value) *text = strdup(value);
        } else if (type == 'i') {
            int32_t value = 0;
            if (csdbus()->sd_bus_message_read_basic(reply, 'i', &value) > 0) *number = value;
        } else if (type == 'u') {
            uint32_t value = 0;
            if (csdbus()->sd_bus_message_read_basic(reply, 'u', &value) > 0) *number = value;
        } else if (type == 'b') {
            int value = 0;
            if (csdbus()->sd_bus_message_read_basic(reply, 'b', &value) > 0) *number = value;
        }
    }
    r = 0;
done:
    csdbus()->sd_bus_error_free(&failure);
    csdbus()->sd_bus_message_unref(reply);
    csdbus()->sd_bus_message_unref(call);
    return r;
}

// Sends a method call with no arguments and no reply wanted: nothing waits for it.
static inline int csdbus_send(sd_bus *bus, const char *destination, const char *path, const char *interface,
                              const char *member) {
    sd_bus_message *call = NULL;
    int r = csdbus()->sd_bus_message_new_method_call(bus, &call, destination, path, interface, member);
    if (r < 0) return r;
    if ((r = csdbus()->sd_bus_message_set_expect_reply(call, 0)) >= 0) r = csdbus()->sd_bus_send(bus, call, NULL);
    csdbus()->sd_bus_message_unref(call);
    return r;
}

// What a method call to an exported object says, valid while the call is.
typedef struct {
    const char *member;
    // The first argument when it is a string, else NULL.
    const char *argument;
    // The caller's unique name.
    const char *sender;
} csdbus_incoming;

static inline int csdbus_read_incoming(sd_bus_message *call, csdbus_incoming *out) {
    out->member = csdbus()->sd_bus_message_get_member(call);
    out->sender = csdbus()->sd_bus_message_get_sender(call);
    out->argument = NULL;
    char type = 0;
    const char *contents = NULL;
    if (csdbus()->sd_bus_message_peek_type(call, &type, &contents) > 0 && type == 's') {
        if (csdbus()->sd_bus_message_read_basic(call, 's', &out->argument) < 0) out->argument = NULL;
    }
    return csdbus()->sd_bus_message_is_method_call(call, NULL, NULL);
}

// Calls `member` with one string argument and waits at most `usec` for a reply of one
// a{sv}; copies its entries whose values are strings, doubles, integers or booleans as lines
// "key\tvalue" (`*text`, the caller frees). Errors as `csdbus_call`.
static inline int csdbus_call_dictionary(sd_bus *bus, const char *destination, const char *path, const char *interface,
                                         const char *member, const char *argument, uint64_t usec, char **text, char **error) {
    sd_bus_message *call = NULL, *reply = NULL;
    sd_bus_error failure = SD_BUS_ERROR_NULL;
    *text = NULL;
    *error = NULL;
    size_t length = 0, capacity = 256;
    char *out = NULL;
    int r = csdbus()->sd_bus_message_new_method_call(bus, &call, destination, path, interface, member);
    if (r < 0) return r;
    if ((r = csdbus()->sd_bus_message_append_basic(call, 's', argument)) < 0) goto done;
    r = csdbus()->sd_bus_call(bus, call, usec, &failure, &reply);
    if (r < 0) {
        if (csdbus()->sd_bus_error_is_set(&failure)) {
            size_t size = strlen(failure.name) + 2 + (failure.message ? strlen(failure.message) : 0) + 1;
            *error = malloc(size);
            if (*error) snprintf(*error, size, "%s: %s", failure.name, failure.message ? failure.message : "");
        }
        goto done;
    }
    out = malloc(capacity);
    if (!out) { r = -ENOMEM; goto done; }
    out[0] = 0;
    if ((r = csdbus()->sd_bus_message_enter_container(reply, 'a', "{sv}")) <= 0) goto done;
    while ((r = csdbus()->sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
        const char *key = NULL;
        if ((r = csdbus()->sd_bus_message_read_basic(reply, 's', &key)) < 0) goto done;
        char type = 0;
        const char *contents = NULL;
        if ((r = csdbus()->sd_bus_message_peek_type(reply, &type, &contents)) < 0) goto done;
        char value[512];
        value[0] = 0;
        int known = 0;
        if (contents && strlen(contents) == 1 && strchr("sdiub", contents[0])
            && (r = csdbus()->sd_bus_message_enter_container(reply, 'v', contents)) > 0) {
            known = 1;
            if (contents[0] == 's') {
                const char *s = NULL;
                if ((r = csdbus()->sd_bus_message_read_basic(reply, 's', &s)) < 0) goto done;
                snprintf(value, sizeof value, "%s", s ? s : "");
            } else if (contents[0] == 'd') {
                double d = 0;
                if ((r = csdbus()->sd_bus_message_read_basic(reply, 'd', &d)) < 0) goto done;
                snprintf(value, sizeof value, "%.17g", d);
            } else if (contents[0] == 'i') {
                int32_t i = 0;
                if ((r = csdbus()->sd_bus_message_read_basic(reply, 'i', &i)) < 0) goto done;
                snprintf(value, sizeof value, "%d", i);
            } else if (contents[0] == 'u') {
                uint32_t u = 0;
                if ((r = csdbus()->sd_bus_message_read_basic(reply, 'u', &u)) < 0) goto done;
                snprintf(value, sizeof value, "%u", u);
            } else {
                int b = 0;
                if ((r = csdbus()->sd_bus_message_read_basic(reply, 'b', &b)) < 0) goto done;
                snprintf(value, sizeof value, "%d", b);
            }
            if ((r = csdbus()->sd_bus_message_exit_container(reply)) < 0) goto done;
        } else if ((r = csdbus()->sd_bus_message_skip(reply, "v")) < 0) {
            goto done;
        }
        if ((r = csdbus()->sd_bus_message_exit_container(reply)) < 0) goto done;
        if (!known) continue;
        // No tab or line break in a value: they separate.
        for (char *c = value; *c; c++) if (*c == '\t' || *c == '\n') *c = ' ';
        size_t need = strlen(key) + 1 + strlen(value) + 2;
        if (length + need > capacity) {
            while (length + need > capacity) capacity *= 2;
            char *grown = realloc(out, capacity);
            if (!grown) { r = -ENOMEM; goto done; }
            out = grown;
        }
        length += (size_t)sprintf(out + length, "%s\t%s\n", key, value);
    }
    if (r < 0) goto done;
    r = csdbus()->sd_bus_message_exit_container(reply);
done:
    if (r >= 0) {
        *text = out;
        r = 0;
    } else {
        free(out);
    }
    csdbus()->sd_bus_error_free(&failure);
    csdbus()->sd_bus_message_unref(reply);
    csdbus()->sd_bus_message_unref(call);
    return r;
}

// Owns `name` on the bus (waits for the bus's answer); -EEXIST when another owns it.
static inline int csdbus_request_name(sd_bus *bus, const char *name) { return csdbus()->sd_bus_request_name(bus, name, 0); }

// Adds a match rule (waits for the bus's answer); signals it matches reach `callback`.
static inline int csdbus_add_match(sd_bus *bus, sd_bus_slot **slot, const char *rule, sd_bus_message_handler_t callback,
                                   void *userdata) {
    return csdbus()->sd_bus_add_match(bus, slot, rule, callback, userdata);
}

// The first three string arguments of a signal (NameOwnerChanged: name, old owner, new
// owner), valid while the message is; NULL for those it lacks.
static inline void csdbus_read_strings(sd_bus_message *message, const char *out[3]) {
    for (int i = 0; i < 3; i++) {
        out[i] = NULL;
        char type = 0;
        const char *contents = NULL;
        if (csdbus()->sd_bus_message_peek_type(message, &type, &contents) <= 0 || type != 's') return;
        if (csdbus()->sd_bus_message_read_basic(message, 's', &out[i]) < 0) { out[i] = NULL; return; }
    }
}

// Answers a method call with one string.
static inline int csdbus_reply_text(sd_bus_message *call, const char *text) {
    sd_bus_message *reply = NULL;
    int r = csdbus()->sd_bus_message_new_method_return(call, &reply);
    if (r < 0) return r;
    if ((r = csdbus()->sd_bus_message_append_basic(reply, 's', text)) >= 0) r = csdbus()->sd_bus_send(NULL, reply, NULL);
    csdbus()->sd_bus_message_unref(reply);
    return r;
}

// Answers a method call with an error.
static inline int csdbus_reply_error(sd_bus_message *call, const char *name, const char *message) {
    sd_bus_error failure = SD_BUS_ERROR_MAKE_CONST(name, message);
    return csdbus()->sd_bus_reply_method_error(call, &failure);
}

// The unique name the bus gave this connection, copied; NULL before the handshake is done.
static inline char *csdbus_unique_name(sd_bus *bus) {
    const char *name = NULL;
    return csdbus()->sd_bus_get_unique_name(bus, &name) >= 0 && name ? strdup(name) : NULL;
}

// The rest of what the Swift layer calls, by name.
static inline int csdbus_get_fd(sd_bus *bus) { return csdbus()->sd_bus_get_fd(bus); }
static inline int csdbus_get_events(sd_bus *bus) { return csdbus()->sd_bus_get_events(bus); }
static inline int csdbus_process(sd_bus *bus) { return csdbus()->sd_bus_process(bus, NULL); }
static inline void csdbus_close(sd_bus *bus) { csdbus()->sd_bus_flush_close_unref(bus); }
static inline int csdbus_add_object(sd_bus *bus, sd_bus_slot **slot, const char *path, sd_bus_message_handler_t callback,
                                    void *userdata) {
    return csdbus()->sd_bus_add_object(bus, slot, path, callback, userdata);
}
static inline void csdbus_slot_unref(sd_bus_slot *slot) { csdbus()->sd_bus_slot_unref(slot); }
static inline sd_bus_message *csdbus_message_ref(sd_bus_message *message) { return csdbus()->sd_bus_message_ref(message); }
static inline void csdbus_message_unref(sd_bus_message *message) { csdbus()->sd_bus_message_unref(message); }

#endif
