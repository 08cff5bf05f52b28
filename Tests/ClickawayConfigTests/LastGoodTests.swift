@testable import ClickawayConfig
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

    /// The saved file without its `saved = ...` line, as splitting it into lines, dropping
    /// that one and joining the rest gives it, in every place the line can be.
    @Test(arguments: [
        "a\nsaved = 1\nb\n", "saved = 1\nb", "a\nsaved = 1", "saved = 1", "a\n\nsaved = 1\n\n", "a\nb\n", "",
        "saved = 1\nsaved = 2\n", "a\n saved = 1\n", "asaved = 1\n", "x = 1\nsaved = 2\ntext = \"saved = 3\"\n",
    ])
    func theSavedLineIsTakenOutAsSplittingIntoLinesWould(_ text: String) {
        let bytes = Array(text.utf8)
        let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        let kept = lines.filter { !$0.starts(with: Array("saved = ".utf8)) }
        let expected = kept.count == lines.count - 1 ? Array(kept.joined(separator: [UInt8(ascii: "\n")])) : nil
        #expect(LastGoodConfig.stripSaved(bytes) == expected)
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
