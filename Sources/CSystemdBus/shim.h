#ifndef CLICKAWAY_CSYSTEMDBUS_SHIM_H
#define CLICKAWAY_CSYSTEMDBUS_SHIM_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

// sd-bus's variadic calls (sd_bus_call_method, sd_bus_reply_method_return, sd_bus_message_read)
// cannot be called from Swift; these do the same with at most two string arguments. Each frees
// what it made and copies out what the caller keeps (strdup: the caller frees).

// A client connection to the bus at `address` (a D-Bus address: unix:path=...), started: the
// socket is connected and the handshake goes on as the connection is processed.
static inline int csdbus_open(const char *address, const char *description, sd_bus **out) {
    sd_bus *bus = NULL;
    int r = sd_bus_new(&bus);
    if (r < 0) return r;
    if ((r = sd_bus_set_address(bus, address)) < 0 || (r = sd_bus_set_bus_client(bus, 1)) < 0
        || (r = sd_bus_set_description(bus, description)) < 0 || (r = sd_bus_start(bus)) < 0) {
        sd_bus_unref(bus);
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
    int r = sd_bus_message_new_method_call(bus, &call, destination, path, interface, member);
    if (r < 0) return r;
    if (arguments > 0 && (r = sd_bus_message_append_basic(call, 's', first)) < 0) goto done;
    if (arguments > 1 && (r = sd_bus_message_append_basic(call, 's', second)) < 0) goto done;
    r = sd_bus_call(bus, call, usec, &failure, &reply);
    if (r < 0) {
        if (sd_bus_error_is_set(&failure)) {
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
    if (sd_bus_message_peek_type(reply, &type, &contents) > 0) {
        if (type == 's') {
            const char *value = NULL;
            if (sd_bus_message_read_basic(reply, 's', &value) > 0 && value) *text = strdup(value);
        } else if (type == 'i') {
            int32_t value = 0;
            if (sd_bus_message_read_basic(reply, 'i', &value) > 0) *number = value;
        } else if (type == 'u') {
            uint32_t value = 0;
            if (sd_bus_message_read_basic(reply, 'u', &value) > 0) *number = value;
        } else if (type == 'b') {
            int value = 0;
            if (sd_bus_message_read_basic(reply, 'b', &value) > 0) *number = value;
        }
    }
    r = 0;
done:
    sd_bus_error_free(&failure);
    sd_bus_message_unref(reply);
    sd_bus_message_unref(call);
    return r;
}

// Sends a method call with no arguments and no reply wanted: nothing waits for it.
static inline int csdbus_send(sd_bus *bus, const char *destination, const char *path, const char *interface,
                              const char *member) {
    sd_bus_message *call = NULL;
    int r = sd_bus_message_new_method_call(bus, &call, destination, path, interface, member);
    if (r < 0) return r;
    if ((r = sd_bus_message_set_expect_reply(call, 0)) >= 0) r = sd_bus_send(bus, call, NULL);
    sd_bus_message_unref(call);
    return r;
}

// What a method call to an exported object says, valid while the call is.
typedef struct {
    const char *member;
    const char *sender;
    // The first argument when it is a string, else NULL.
    const char *argument;
} csdbus_incoming;

static inline int csdbus_read_incoming(sd_bus_message *call, csdbus_incoming *out) {
    out->member = sd_bus_message_get_member(call);
    out->sender = sd_bus_message_get_sender(call);
    out->argument = NULL;
    char type = 0;
    const char *contents = NULL;
    if (sd_bus_message_peek_type(call, &type, &contents) > 0 && type == 's') {
        if (sd_bus_message_read_basic(call, 's', &out->argument) < 0) out->argument = NULL;
    }
    return sd_bus_message_is_method_call(call, NULL, NULL);
}

// Answers a method call with one string.
static inline int csdbus_reply_text(sd_bus_message *call, const char *text) {
    sd_bus_message *reply = NULL;
    int r = sd_bus_message_new_method_return(call, &reply);
    if (r < 0) return r;
    if ((r = sd_bus_message_append_basic(reply, 's', text)) >= 0) r = sd_bus_send(NULL, reply, NULL);
    sd_bus_message_unref(reply);
    return r;
}

// Answers a method call with an error.
static inline int csdbus_reply_error(sd_bus_message *call, const char *name, const char *message) {
    sd_bus_error failure = SD_BUS_ERROR_MAKE_CONST(name, message);
    return sd_bus_reply_method_error(call, &failure);
}

// The unique name the bus gave this connection, copied; NULL before the handshake is done.
static inline char *csdbus_unique_name(sd_bus *bus) {
    const char *name = NULL;
    return sd_bus_get_unique_name(bus, &name) >= 0 && name ? strdup(name) : NULL;
}

#endif
