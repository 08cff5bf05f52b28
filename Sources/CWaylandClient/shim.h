#ifndef CLICKAWAY_CWAYLANDCLIENT_SHIM_H
#define CLICKAWAY_CWAYLANDCLIENT_SHIM_H

#include <wayland-client.h>
#include <sys/syscall.h>
#include <unistd.h>

// The core interface descriptions, for wl_registry_bind: Swift imports an extern struct
// global as a value, and libwayland keeps the pointer it is given.
static inline const struct wl_interface *cwl_compositor_interface(void) { return &wl_compositor_interface; }
static inline const struct wl_interface *cwl_shm_interface(void) { return &wl_shm_interface; }
static inline const struct wl_interface *cwl_seat_interface(void) { return &wl_seat_interface; }
static inline const struct wl_interface *cwl_output_interface(void) { return &wl_output_interface; }

// memfd_create(2) for shm buffers, through syscall(2): glibc declares memfd_create only
// under _GNU_SOURCE, which Swift's Glibc module is not built with.
static inline int cwl_memfd_create(const char *name) {
    return (int)syscall(SYS_memfd_create, name, 1u /* MFD_CLOEXEC */);
}

#endif
