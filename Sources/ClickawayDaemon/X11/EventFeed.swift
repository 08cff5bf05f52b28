internal import ClickawayX11

/// The events of one X connection as the loop reads them: the socket once after the loop
/// found it readable (libxcb reads all that is there at once; a second read would find
/// nothing), libxcb's queue otherwise. An event looked at before its turn is held for it.
struct EventFeed {
    private let connection: XConnection
    /// The loop found the socket readable (or has not looked yet), and it is not read since.
    var socketReadable: Bool
    private var held: XEvent?

    init(_ connection: XConnection, socketReadable: Bool) {
        self.connection = connection
        self.socketReadable = socketReadable
    }

    /// The next event, held until `next` or `drop`.
    mutating func peek() -> XEvent? {
        if held == nil { held = read() }
        return held
    }

    mutating func next() -> XEvent? {
        defer { held = nil }
        return peek()
    }

    mutating func drop() { held = nil }

    /// Whether an event is held or waits in libxcb's queue (then held); never reads the socket.
    mutating func hasQueuedEvent() -> Bool {
        if held == nil { held = connection.pollQueuedEvent() }
        return held != nil
    }

    /// Whether an event is held or the socket is to be read.
    var mayHaveEvent: Bool { socketReadable || held != nil }

    private mutating func read() -> XEvent? {
        guard socketReadable else { return connection.pollQueuedEvent() }
        socketReadable = false
        return connection.pollEvent()
    }
}
