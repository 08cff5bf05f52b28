// clickaway's GNOME Shell extension: the display side of the clickaway daemon on GNOME,
// which has no layer-shell and tells no client where another's windows are. The daemon
// decides everything; this only carries facts and carries out answers:
//
// - a layer over every window whose pick is the stage minus the daemon's holes (popups,
//   anchors, exclusions): clicks in a hole go straight to the window, the others land here;
// - a press on the layer is reported and answered (swallow, or replay: sent on after the real
//   release through a virtual pointer of its own, at the press point, through a pinhole);
// - windows reported at `shown` and as they change or go; closed when the daemon asks, but
//   never a popup-type window (Meta.Window.delete on a DROPDOWN_MENU kills GNOME Shell 43.9);
// - Escape grabbed while the daemon asks;
// - `clickawayctl show`'s picture painted above everything, taking no input.
//
// The Shell never waits on the daemon: every call is asynchronous, a press not answered in
// time takes the layer down, and so does the daemon's name leaving the bus.
// The entry file puts the imports before this and the entry points after it.

function say(text) { console.log(`clickaway: ${text}`); }

// One actor for the whole layer: its pick is one box per rectangle of the stage minus the
// holes. The pick is cached: queue_redraw() keeps the old boxes, queue_relayout() drops them
// and the new ones hold for the very next event. New or re-shown actors are unallocated until
// the next layout and let clicks through, so the layer is never rebuilt, only re-boxed.
const ClickawayLayer = GObject.registerClass(
class ClickawayLayer extends Clutter.Actor {
    _init(params) {
        super._init(params);
        this._boxes = [];
    }

    setBoxes(rects) {
        this._boxes = rects.map(([x, y, w, h]) => new Clutter.ActorBox({ x1: x, y1: y, x2: x + w, y2: y + h }));
        this.queue_relayout();
    }

    vfunc_pick(context) {
        for (const box of this._boxes)
            this.pick_box(context, box);
    }
});

// The stage minus the holes, as rectangles: bands between neighbouring hole edges in y, and
// a band's free x spans grown downwards while the next band has the same ones.
function complement(holes, width, height) {
    const clampY = v => Math.max(0, Math.min(height, v));
    const ys = [...new Set([0, height, ...holes.flatMap(([, y, , h]) => [clampY(y), clampY(y + h)])])].sort((a, b) => a - b);
    const out = [];
    let growing = new Map();
    for (let i = 0; i + 1 < ys.length; i++) {
        const top = ys[i], bottom = ys[i + 1];
        const spans = holes.filter(([, y, , h]) => y <= top && y + h >= bottom)
            .map(([x, , w]) => [Math.max(0, x), Math.min(width, x + w)]).filter(([a, b]) => b > a)
            .sort((a, b) => a[0] - b[0]);
        const free = [];
        let x = 0;
        for (const [a, b] of spans) {
            if (a > x)
                free.push([x, a - x]);
            x = Math.max(x, b);
        }
        if (x < width)
            free.push([x, width - x]);
        const next = new Map();
        for (const [fx, fw] of free) {
            const key = `${fx},${fw}`;
            const rect = growing.get(key);
            if (rect) {
                rect[3] = bottom - rect[1];
            } else {
                const made = [fx, top, fw, bottom - top];
                out.push(made);
                next.set(key, made);
                continue;
            }
            next.set(key, rect);
        }
        growing = next;
    }
    return out;
}

// Window types as clickaway.toml's `type` names them (the suffixes of _NET_WM_WINDOW_TYPE_*).
const TYPE_WORDS = new Map([
    [Meta.WindowType.NORMAL, 'normal'], [Meta.WindowType.DESKTOP, 'desktop'], [Meta.WindowType.DOCK, 'dock'],
    [Meta.WindowType.DIALOG, 'dialog'], [Meta.WindowType.MODAL_DIALOG, 'dialog'], [Meta.WindowType.TOOLBAR, 'toolbar'],
    [Meta.WindowType.MENU, 'menu'], [Meta.WindowType.UTILITY, 'utility'], [Meta.WindowType.SPLASHSCREEN, 'splash'],
    [Meta.WindowType.DROPDOWN_MENU, 'dropdown_menu'], [Meta.WindowType.POPUP_MENU, 'popup_menu'],
    [Meta.WindowType.TOOLTIP, 'tooltip'], [Meta.WindowType.NOTIFICATION, 'notification'], [Meta.WindowType.COMBO, 'combo'],
    [Meta.WindowType.DND, 'dnd'],
]);

// Menus, dropdowns and the like: never closed (delete() on a DROPDOWN_MENU crashes Shell 43.9),
// and while one is mapped its own grab wants Escape.
const POPUP_TYPES = new Set([Meta.WindowType.DROPDOWN_MENU, Meta.WindowType.POPUP_MENU, Meta.WindowType.COMBO,
    Meta.WindowType.TOOLTIP, Meta.WindowType.NOTIFICATION, Meta.WindowType.DND]);

class ClickawayShellSide {
    constructor(shellVersion) {
        this._shellVersion = shellVersion;
        this._signals = [];          // [object, handler id]
        this._windows = new Map();   // Meta.Window -> { id, handlers, shown }
        this._byId = new Map();
        this._nextWindow = 1;
        this._layer = null;
        this._holes = null;          // the daemon's, null: no layer
        this._pinhole = null;        // [x, y] while a replay goes through
        this._pinholeTimer = 0;
        this._presses = new Map();   // id -> { x, y, button, answer, released, watchdog }
        this._nextPress = 1;
        this._replayPointer = null;
        this._replayDevice = null;
        this._escapeWanted = false;
        this._escape = null;         // { action, name } while grabbed
        this._owner = null;          // the daemon's unique name while it is on the bus
        this._polling = false;
        this._cancellable = new Gio.Cancellable();
        this._watch = 0;
        this._monitorNames = new Map();
        this._drawing = null;        // clickawayctl show's picture while it is drawn
        this._helloRetry = 0;
        this._helloTries = 0;
    }

    enable() {
        const display = global.display;
        this._connect(display, 'window-created', (_d, w) => this._track(w));
        this._connect(display, 'restacked', () => this._send({ ev: PROTOCOL.ev.stacking, ids: this._stacking() }));
        this._connect(display, 'accelerator-activated', (_d, action, _device, time) => {
            if (this._escape && action === this._escape.action)
                this._send({ ev: PROTOCOL.ev.escape, time });
        });
        // The layer is above the overview (seen: it took a click on it): off while it shows.
        this._connect(Main.overview, 'showing', () => {
            this._layer?.hide();
            this._drawing?.hide();
        });
        this._connect(Main.overview, 'hidden', () => {
            this._layer?.show();
            this._drawing?.show();
        });
        this._connect(Main.layoutManager, 'monitors-changed', () => {
            this._layOut();
            this._readMonitorNames();
        });
        for (const actor of global.get_window_actors())
            this._track(actor.meta_window);
        // The replay pointer's ClutterInputDevice is announced by the seat: its events are
        // known by it and never reported.
        const seat = Clutter.get_default_backend().get_default_seat();
        const added = seat.connect('device-added', (_s, device) => {
            seat.disconnect(added);
            this._replayDevice = device;
        });
        this._replayPointer = seat.create_virtual_device(Clutter.InputDeviceType.POINTER_DEVICE);
        this._watch = Gio.bus_watch_name_on_connection(Gio.DBus.session, PROTOCOL.busName, Gio.BusNameWatcherFlags.NONE,
            (_c, _n, owner) => this._daemonAppeared(owner), () => this._daemonVanished());
    }

    disable() {
        if (this._owner)
            this._call('Event', { ev: PROTOCOL.ev.bye }, null);
        this._cancellable.cancel();
        if (this._watch)
            Gio.bus_unwatch_name(this._watch);
        this._watch = 0;
        this._owner = null;
        this._layerDown();
        this._stopTimer('_helloRetry');
        for (const [object, id] of this._signals)
            object.disconnect(id);
        this._signals = [];
        for (const w of [...this._windows.keys()])
            this._untrack(w);
        // run_dispose() takes the device off the seat now; dropping it would wait for GC.
        this._replayPointer?.run_dispose();
        this._replayPointer = null;
    }

    _connect(object, signal, handler) {
        this._signals.push([object, object.connect(signal, handler)]);
    }

    // --- the daemon -----------------------------------------------------------------------------

    _daemonAppeared(owner) {
        this._owner = owner;
        this._helloTries = 0;
        say(`connected to the daemon (${owner})`);
        this._hello();
        // Mutter's DisplayConfig is on the bus only once the Shell has started: asked now.
        this._readMonitorNames();
    }

    // The daemon takes a hello only from the owner of org.gnome.Shell (this Shell's connection);
    // one it refused or missed is said again a few times, a second apart.
    _hello() {
        this._stopTimer('_helloRetry');
        const windows = [...this._windows.entries()].filter(([, r]) => r.shown).map(([w]) => this._describe(w));
        this._call('Event', { ev: PROTOCOL.ev.hello, protocol: PROTOCOL.version, shell: this._shellVersion, windows,
            stacking: this._stacking(), monitors: this._monitors() }, (reply, owner) => {
            if (owner !== this._owner)
                return;
            if (reply !== null) {
                this._commands(reply);
                this._poll();
            } else if (++this._helloTries < 5) {
                this._startTimer('_helloRetry', 1000, () => this._owner === owner && this._hello());
            }
        });
    }

    // A one-shot timer whose id `this[field]` holds while it waits (0: none).
    _startTimer(field, ms, action) {
        this._stopTimer(field);
        this[field] = GLib.timeout_add(GLib.PRIORITY_DEFAULT, ms, () => {
            this[field] = 0;
            action();
            return GLib.SOURCE_REMOVE;
        });
    }

    _stopTimer(field) {
        if (this[field])
            GLib.source_remove(this[field]);
        this[field] = 0;
    }

    _daemonVanished() {
        if (!this._owner)
            return;
        say(`the daemon (${this._owner}) left the bus: layer, drawing and Escape removed`);
        this._owner = null;
        this._stopTimer('_helloRetry');
        this._layerDown();
    }

    // Every call goes to the owner's unique name: a restarted daemon never gets the old one's.
    _call(method, message, done) {
        const owner = this._owner;
        const args = message === null ? null : new GLib.Variant('(s)', [JSON.stringify(message)]);
        Gio.DBus.session.call(owner, PROTOCOL.path, PROTOCOL.iface, method, args, new GLib.VariantType('(s)'),
            Gio.DBusCallFlags.NO_AUTO_START, method === 'Wait' ? GLib.MAXINT32 : 5000, this._cancellable,
            (connection, result) => {
                let reply = null;
                try {
                    [reply] = connection.call_finish(result).deepUnpack();
                } catch (e) {
                    if (!e.matches(Gio.IOErrorEnum, Gio.IOErrorEnum.CANCELLED))
                        say(`${method} to ${owner} failed: ${e.message}`);
                }
                if (done)
                    done(reply, owner);
            });
    }

    _send(message) {
        if (!this._owner)
            return;
        this._call('Event', message, reply => reply !== null && this._commands(reply));
    }

    // The daemon's own commands come as the reply to a Wait it holds until it has some.
    _poll() {
        if (this._polling || !this._owner)
            return;
        this._polling = true;
        this._call('Wait', null, (reply, owner) => {
            this._polling = false;
            if (reply !== null)
                this._commands(reply);
            if (reply !== null && this._owner === owner)
                this._poll();
        });
    }

    _commands(text) {
        let list;
        try {
            list = JSON.parse(text);
        } catch (e) {
            say(`a reply that is not JSON: ${text}`);
            return;
        }
        for (const c of Array.isArray(list) ? list : []) {
            switch (c.cmd) {
            case PROTOCOL.cmd.answer: this._answer(c.id, c.decision); break;
            case PROTOCOL.cmd.holes: this._setHoles(c.holes); break;
            case PROTOCOL.cmd.close: this._close(c.id); break;
            case PROTOCOL.cmd.escape: this._escapeWanted = !!c.on; this._followEscape(); break;
            case PROTOCOL.cmd.ping: this._send({ ev: PROTOCOL.ev.pong, ticket: c.ticket }); break;
            case PROTOCOL.cmd.show: this._show(c.fills); break;
            default: say(`a command clickaway's extension does not know: ${JSON.stringify(c)}`);
            }
        }
    }

    // --- the layer ------------------------------------------------------------------------------

    _setHoles(holes) {
        this._holes = Array.isArray(holes) ? holes : null;
        this._layOut();
    }

    _layOut() {
        if (this._holes === null) {
            this._destroyLayer();
            return;
        }
        const { width, height } = global.stage;
        if (!this._layer) {
            this._layer = new ClickawayLayer({ name: 'clickaway-layer', reactive: true, x: 0, y: 0, width, height });
            this._layer.connect('button-press-event', (_a, event) => this._pressed(event));
            this._layer.connect('button-release-event', (_a, event) => this._released(event));
            this._layer.connect('motion-event', () => {
                if (this._pinhole)
                    this._closePinhole();
                return Clutter.EVENT_PROPAGATE;
            });
            Main.layoutManager.addChrome(this._layer);
            if (Main.overview.visible)
                this._layer.hide();
        } else if (this._layer.width !== width || this._layer.height !== height) {
            this._layer.set_size(width, height);
        }
        const holes = this._pinhole ? [...this._holes, [this._pinhole[0], this._pinhole[1], 1, 1]] : this._holes;
        this._layer.setBoxes(complement(holes, width, height));
    }

    _destroyLayer() {
        if (!this._layer)
            return;
        Main.layoutManager.removeChrome(this._layer);
        this._layer.destroy();
        this._layer = null;
    }

    // Without the daemon (gone, or no answer in time): no layer, no drawing, no Escape, no press waiting.
    _layerDown() {
        this._show(null);
        for (const p of this._presses.values()) {
            if (p.watchdog)
                GLib.source_remove(p.watchdog);
        }
        this._presses.clear();
        this._closePinhole();
        this._holes = null;
        this._destroyLayer();
        this._escapeWanted = false;
        this._followEscape();
    }

    _pressed(event) {
        // A replay of ours that came back to the layer is never reported: it would be replayed again.
        if (event.get_source_device() === this._replayDevice)
            return Clutter.EVENT_STOP;
        const [x, y] = event.get_coords();
        if (this._pinhole)
            this._closePinhole();
        const id = this._nextPress++;
        const press = { x, y, button: event.get_button(), answer: null, released: false, watchdog: 0 };
        this._presses.set(id, press);
        press.watchdog = GLib.timeout_add(GLib.PRIORITY_DEFAULT, PROTOCOL.answerLimitMs, () => {
            press.watchdog = 0;
            say(`no answer to a press in ${PROTOCOL.answerLimitMs} ms: the layer goes until the daemon sends it again`);
            this._layerDown();
            this._send({ ev: PROTOCOL.ev.layerDown, why: `no answer to a press in ${PROTOCOL.answerLimitMs} ms` });
            return GLib.SOURCE_REMOVE;
        });
        this._send({ ev: PROTOCOL.ev.press, id, x, y, button: press.button, time: event.get_time() });
        return Clutter.EVENT_STOP;
    }

    // The release comes to the layer that took the press, wherever the pointer is now.
    _released(event) {
        if (event.get_source_device() === this._replayDevice)
            return Clutter.EVENT_STOP;
        const button = event.get_button();
        const [x, y] = event.get_coords();
        let id = null;
        for (const [pid, p] of this._presses) {
            if (p.button === button && !p.released)
                id = pid;
        }
        this._send({ ev: PROTOCOL.ev.release, id, x, y, button });
        const press = this._presses.get(id);
        if (press) {
            press.released = true;
            if (press.answer)
                this._finish(id, press);
        }
        return Clutter.EVENT_STOP;
    }

    _answer(id, decision) {
        const press = this._presses.get(id);
        if (!press)
            return;
        press.answer = decision;
        if (press.watchdog)
            GLib.source_remove(press.watchdog);
        press.watchdog = 0;
        if (press.released)
            this._finish(id, press);
    }

    // A click to go on is sent once released: the seat drops a press of a button another
    // device holds, and jams that button. At the press point, a click rather than a drag,
    // through a pinhole the layer keeps open until the next motion on it or pinholeMs.
    _finish(id, press) {
        this._presses.delete(id);
        if (press.answer !== 'replay' || !this._replayPointer)
            return;
        this._pinhole = [Math.floor(press.x), Math.floor(press.y)];
        if (this._layer)
            this._layOut();
        const t = GLib.get_monotonic_time();
        this._replayPointer.notify_absolute_motion(t, press.x, press.y);
        this._replayPointer.notify_button(t, press.button, Clutter.ButtonState.PRESSED);
        this._replayPointer.notify_button(t, press.button, Clutter.ButtonState.RELEASED);
        this._startTimer('_pinholeTimer', PROTOCOL.pinholeMs, () => this._closePinhole());
    }

    _closePinhole() {
        this._stopTimer('_pinholeTimer');
        if (!this._pinhole)
            return;
        this._pinhole = null;
        if (this._layer)
            this._layOut();
    }

    // --- show -----------------------------------------------------------------------------------

    // clickawayctl show's picture: solid rectangles [x, y, width, height, 0xRRGGBB], later ones
    // on top, painted on one drawing area over their bounds, above every window and the Shell's
    // menus (top chrome). Not reactive, so it is never picked: every click and motion goes to
    // what is under it, the layer included. It is no Meta.Window, so never reported as one.
    _show(fills) {
        if (this._drawing) {
            Main.layoutManager.removeChrome(this._drawing);
            this._drawing.destroy();
            this._drawing = null;
        }
        const list = (Array.isArray(fills) ? fills : []).filter(f => Array.isArray(f) && f.length === 5 &&
            f.every(Number.isFinite) && f[2] > 0 && f[3] > 0);
        if (list.length === 0)
            return;
        const [x, y] = list.reduce(([a, b], f) => [Math.min(a, f[0]), Math.min(b, f[1])], [Infinity, Infinity]);
        const [right, bottom] = list.reduce(([a, b], f) => [Math.max(a, f[0] + f[2]), Math.max(b, f[1] + f[3])], [-Infinity, -Infinity]);
        this._drawing = new St.DrawingArea({ name: 'clickaway-show', reactive: false, x, y, width: right - x, height: bottom - y });
        this._drawing.clickawayFills = list;
        this._drawing.connect('repaint', area => {
            const cr = area.get_context();
            for (const [fx, fy, fw, fh, rgb] of list) {
                cr.setSourceRGB(((rgb >> 16) & 0xff) / 255, ((rgb >> 8) & 0xff) / 255, (rgb & 0xff) / 255);
                cr.rectangle(fx - x, fy - y, fw, fh);
                cr.fill();
            }
            cr.$dispose();
        });
        Main.layoutManager.addTopChrome(this._drawing, { affectsInputRegion: false });
        if (Main.overview.visible)
            this._drawing.hide();
    }

    // --- Escape ---------------------------------------------------------------------------------

    // Taken while the daemon asks, but not while a menu or dropdown is mapped: its own grab wants it.
    _followEscape() {
        const menuOpen = [...this._windows.entries()].some(([w, r]) => r.shown && POPUP_TYPES.has(w.get_window_type()));
        const want = this._escapeWanted && !menuOpen;
        if (want && !this._escape) {
            const action = global.display.grab_accelerator('Escape', Meta.KeyBindingFlags.NONE);
            if (action === Meta.KeyBindingAction.NONE) {
                say('cannot take the Escape key: another program holds it');
                return;
            }
            const name = Meta.external_binding_name_for_action(action);
            // Else it fires only in the NORMAL action mode.
            Main.wm.allowKeybinding(name, Shell.ActionMode.ALL);
            this._escape = { action, name };
        } else if (!want && this._escape) {
            global.display.ungrab_accelerator(this._escape.action);
            Main.wm.allowKeybinding(this._escape.name, Shell.ActionMode.NONE);
            this._escape = null;
        }
    }

    // --- windows --------------------------------------------------------------------------------

    // Reported at `shown`, with its final frame (before it, title and class may be null and the
    // frame 0x0); transient_for has no notify in 43: read at every report.
    _track(w) {
        if (this._windows.has(w))
            return;
        const record = { id: this._nextWindow++, handlers: [], shown: false };
        this._windows.set(w, record);
        this._byId.set(record.id, w);
        const report = () => {
            if (record.shown)
                this._send({ ev: PROTOCOL.ev.window, window: this._describe(w) });
        };
        for (const signal of ['position-changed', 'size-changed', 'notify::title', 'notify::wm-class', 'notify::minimized'])
            record.handlers.push(w.connect(signal, report));
        record.handlers.push(w.connect('shown', () => {
            record.shown = true;
            report();
            this._followEscape();
        }));
        record.handlers.push(w.connect('unmanaged', () => {
            if (record.shown)
                this._send({ ev: PROTOCOL.ev.gone, id: record.id });
            this._untrack(w);
            this._followEscape();
        }));
        // Already on screen (the extension enabled in a running session).
        if (w.get_compositor_private()?.visible)
            record.shown = true;
    }

    _untrack(w) {
        const record = this._windows.get(w);
        if (!record)
            return;
        for (const id of record.handlers)
            w.disconnect(id);
        this._windows.delete(w);
        this._byId.delete(record.id);
    }

    _describe(w) {
        const frame = w.get_frame_rect();
        const parent = w.get_transient_for();
        const wayland = w.get_client_type() === Meta.WindowClientType.WAYLAND;
        return {
            id: this._windows.get(w).id, x: frame.x, y: frame.y, width: frame.width, height: frame.height,
            pid: w.get_pid(), wmClass: w.get_wm_class(), instance: w.get_wm_class_instance(),
            // A Wayland client's app_id is its wm_class; a sandboxed one's is its Flatpak id.
            appId: w.get_sandboxed_app_id() ?? (wayland ? w.get_wm_class() : null),
            title: w.get_title(), type: TYPE_WORDS.get(w.get_window_type()) ?? null,
            parent: parent ? this._windows.get(parent)?.id ?? 0 : 0, visible: !w.minimized,
        };
    }

    _stacking() {
        const windows = [...this._windows.entries()].filter(([, r]) => r.shown).map(([w]) => w);
        return global.display.sort_windows_by_stacking(windows).map(w => this._windows.get(w).id);
    }

    _close(id) {
        const w = this._byId.get(id);
        if (!w)
            this._send({ ev: PROTOCOL.ev.refused, id, why: 'the window is gone' });
        else if (POPUP_TYPES.has(w.get_window_type()))
            this._send({ ev: PROTOCOL.ev.refused, id, why: 'a menu or dropdown is closed by its own program, not by GNOME Shell' });
        else
            w.delete(global.get_current_time());
    }

    // --- monitors -------------------------------------------------------------------------------

    _monitors() {
        return Main.layoutManager.monitors.map(m => ({
            name: this._monitorNames.get(`${m.x},${m.y}`) ?? null, x: m.x, y: m.y, width: m.width, height: m.height,
        }));
    }

    // Connector names (what `output = "..."` says) are mutter's, over its DisplayConfig
    // interface: its logical monitors by their place.
    _readMonitorNames() {
        Gio.DBus.session.call('org.gnome.Mutter.DisplayConfig', '/org/gnome/Mutter/DisplayConfig',
            'org.gnome.Mutter.DisplayConfig', 'GetCurrentState', null, null, Gio.DBusCallFlags.NONE, 5000, this._cancellable,
            (connection, result) => {
                try {
                    const [, , logical] = connection.call_finish(result).deepUnpack();
                    this._monitorNames = new Map(logical.map(([x, y, , , , specs]) => [`${x},${y}`, specs[0]?.[0]]));
                } catch (e) {
                    if (!e.matches(Gio.IOErrorEnum, Gio.IOErrorEnum.CANCELLED))
                        say(`cannot read the monitors' names: ${e.message}`);
                    return;
                }
                this._send({ ev: PROTOCOL.ev.monitors, monitors: this._monitors() });
            });
    }
}
