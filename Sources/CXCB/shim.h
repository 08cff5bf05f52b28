#ifndef CLICKAWAY_CXCB_SHIM_H
#define CLICKAWAY_CXCB_SHIM_H

#include <xcb/xcb.h>
#include <xcb/xfixes.h>
#include <xcb/randr.h>
#include <xcb/xtest.h>
// xcb_poll_for_reply and xcb_wait_for_reply: replies collected apart from their requests.
#include <xcb/xcbext.h>

// xcb_extension_t is an incomplete type in the public headers, so Swift cannot import the
// extension id globals themselves; these hand out their addresses for
// xcb_get_extension_data / xcb_prefetch_extension_data.
static inline xcb_extension_t *cxcb_randr_id(void) { return &xcb_randr_id; }
static inline xcb_extension_t *cxcb_xfixes_id(void) { return &xcb_xfixes_id; }

#endif
