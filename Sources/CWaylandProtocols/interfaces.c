#include "CWaylandProtocols.h"

const struct wl_interface *cwp_zwlr_layer_shell_v1_interface(void) { return &zwlr_layer_shell_v1_interface; }
const struct wl_interface *cwp_zwlr_virtual_pointer_manager_v1_interface(void) { return &zwlr_virtual_pointer_manager_v1_interface; }
const struct wl_interface *cwp_zxdg_output_manager_v1_interface(void) { return &zxdg_output_manager_v1_interface; }
const struct wl_interface *cwp_xdg_wm_base_interface(void) { return &xdg_wm_base_interface; }
const struct wl_interface *cwp_org_kde_kwin_fake_input_interface(void) { return &org_kde_kwin_fake_input_interface; }
const struct wl_interface *cwp_zwp_tablet_manager_v2_interface(void) { return &zwp_tablet_manager_v2_interface; }
