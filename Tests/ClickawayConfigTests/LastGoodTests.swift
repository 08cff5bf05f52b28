import ClickawayConfig
import Foundation
import Testing

@Suite struct LastGoodTests {
    func keeper(_ home: TemporaryDirectory, configFile: String? = "/c/config.toml") -> LastGoodConfig {
        LastGoodConfig(state: StateLocation(environment: ["XDG_STATE_HOME": home.path + "/state"]), configFile: configFile,
                       environment: ["XDG_CONFIG_HOME": home.path])
    }

    @Test func aSavedConfigurationLoadsAgainWithItsFilesAndText() throws {
        let home = try TemporaryDirectory()
        let text = "# \"quotes\", a \\ backslash, a tab\t, é and 日本\n[[popup]]\nname = \"p\"\nrect = [0, 0, 1, 1]\r\n"
        let config = try ConfigLoader.load([ConfigFile(path: "/c/config.toml", text: text),
                                            ConfigFile(path: "/c/conf.d/10-x.toml", text: "[[exclude]]\nrect = [1, 2, 3, 4]\n")])
        let keeper = keeper(home)
        #expect(keeper.save(config) == nil)
        let (loaded, saved) = try keeper.load().get()
        #expect(loaded.sources == config.sources)
        #expect(loaded.popupCount == 1 && loaded.exclusionCount == 1)
        #expect(saved.hasSuffix("Z") && saved.count == 20, "\(saved)")
        // Private to its owner, in a private directory.
        let attributes = try FileManager.default.attributesOfItem(atPath: keeper.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let directory = try FileManager.default.attributesOfItem(atPath: home.path + "/state/clickaway")
        #expect((directory[.posixPermissions] as? Int) == 0o700)
    }

    @Test func anUnchangedConfigurationIsNotWrittenAgain() throws {
        let home = try TemporaryDirectory()
        let config = try ConfigLoader.load([ConfigFile(path: "/c/config.toml", text: "[settings]\n")])
        let keeper = keeper(home)
        #expect(keeper.save(config) == nil)
        let inode = try FileManager.default.attributesOfItem(atPath: keeper.path)[.systemFileNumber] as? Int
        #expect(keeper.save(config) == nil)
        #expect(try FileManager.default.attributesOfItem(atPath: keeper.path)[.systemFileNumber] as? Int == inode)
        let changed = try ConfigLoader.load([ConfigFile(path: "/c/config.toml", text: "[settings]\n# changed\n")])
        #expect(keeper.save(changed) == nil)
        #expect(try FileManager.default.attributesOfItem(atPath: keeper.path)[.systemFileNumber] as? Int != inode)
        #expect(try keeper.load().get().config.sources == changed.sources)
    }

    @Test func oneKeptForAnotherConfigurationIsNotUsed() throws {
        let home = try TemporaryDirectory()
        let config = try ConfigLoader.load([ConfigFile(path: "/c/config.toml", text: "")])
        #expect(keeper(home).save(config) == nil)
        guard case .failure(.otherConfiguration(let source)) = keeper(home, configFile: nil).load() else {
            Issue.record("the lookup used the last good configuration of --config /c/config.toml")
            return
        }
        #expect(source == "file /c/config.toml")
        let relative = LastGoodConfig(state: StateLocation(environment: ["XDG_STATE_HOME": home.path]), configFile: "cfg.toml",
                                      environment: [:])
        #expect(relative.source == "file " + FileManager.default.currentDirectoryPath + "/cfg.toml")
        guard case .failure(.none) = keeper(try TemporaryDirectory()).load() else {
            Issue.record("a last good configuration where none was saved")
            return
        }
    }
}
