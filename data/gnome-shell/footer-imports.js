
let shellSide = null;

function init() {}

function enable() {
    shellSide = new ClickawayShellSide(ShellConfig.PACKAGE_VERSION);
    shellSide.enable();
}

function disable() {
    shellSide?.disable();
    shellSide = null;
}
