
export default class ClickawayExtension extends Extension {
    enable() {
        this._shellSide = new ClickawayShellSide(ShellConfig.PACKAGE_VERSION);
        this._shellSide.enable();
    }

    disable() {
        this._shellSide?.disable();
        this._shellSide = null;
    }
}
