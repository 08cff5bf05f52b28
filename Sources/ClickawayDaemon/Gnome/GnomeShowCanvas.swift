internal import ClickawayCore

/// `clickawayctl show` on GNOME: the picture goes to the extension (`GnomeProtocol.show`),
/// which paints it on one actor above every window that takes no input and is no window;
/// it goes with `clear`, with the daemon (its name leaving the bus), and with `disable()`.
final class GnomeShowCanvas: ShowCanvas {
    private unowned let display: GnomeDisplay

    init(display: GnomeDisplay) { self.display = display }

    var outputCount: Int { display.outputCount }

    func draw(_ picture: ShowPicture) { display.draw(picture.fills) }

    func clear() { display.draw(nil) }
}
