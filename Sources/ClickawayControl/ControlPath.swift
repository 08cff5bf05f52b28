/// Where the control socket lives: `$XDG_RUNTIME_DIR/clickaway/ctl.sock`.
public enum ControlPath {
    public struct Missing: Error, CustomStringConvertible {
        public var description: String {
            "XDG_RUNTIME_DIR is not set, so there is no private place for the control socket "
                + "(systemd and most login managers set it; export it, e.g. XDG_RUNTIME_DIR=/run/user/$(id -u))"
        }
    }

    public static func directory(environment: [String: String]) throws(Missing) -> String {
        guard let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty else { throw Missing() }
        return runtime + "/clickaway"
    }

    public static func socket(environment: [String: String]) throws(Missing) -> String {
        try directory(environment: environment) + "/ctl.sock"
    }
}
