import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// The hint of a segment that filled up is written off the writer's thread (`HintQueue`): the
/// put that sealed the segment returns without waiting for it, and `close()` waits for every
/// such hint, so a clean close still leaves each sealed segment with its hint.
@Suite("Hints of full segments written in the background")
struct HintQueueTests {
  /// How long a held hint waits at most: a put that waited for one takes at least this long.
  static let hold = 3.0

  /// Holds every hint file's creation until `open()` is called (each at most `hold` seconds),
  /// and counts them.
  final class HeldHints: ForwardingFileSystem, @unchecked Sendable {
    let released = DispatchSemaphore(value: 0)
    let opened = Locked<(held: Int, gateOpen: Bool)>((0, false))

    func open() {
      opened.withLock { $0.gateOpen = true }
      for _ in 0..<64 { released.signal() }
    }

    override func open(_ path: String, mode: FileOpenMode) throws -> any StorageFile {
      if path.contains(".hint"), mode == .createNew {
        let mustWait = opened.withLock { state -> Bool in
          state.held += 1
          return !state.gateOpen
        }
        if mustWait { _ = released.wait(timeout: .now() + HintQueueTests.hold) }
      }
      return try super.open(path, mode: mode)
    }
  }

  @Test("puts go on while the hints of the segments they filled are held, and close leaves every hint")
  func putsDoNotWaitForHints() throws {
    let fileSystem = HeldHints()
    var options = testStoreOptions
    options.fileSystem = fileSystem
    options.segmentSizeLimit = 64 << 10
    try withTemporaryDirectory("hint-queue") { directory throws in
      let path = directory.file("store.cask")
      let store = try CaskStore(path: path, password: testPassword, options: options)
      let value = Data(repeating: 0x42, count: 1000)
      // About 1.1 KB a record: 500 records fill several 64 KiB segments.
      let started = Date()
      for index in 0..<500 { try store.put(value, forKey: "key-\(index)") }
      let elapsed = Date().timeIntervalSince(started)
      let held = fileSystem.opened.withLock { $0.held }
      #expect(held >= 1, "no hint was started while the puts ran")
      #expect(elapsed < Self.hold, "the puts waited \(elapsed) s for held hints")
      #expect(try store.get("key-499") == value)
      fileSystem.open()
      try store.close()

      let names = try FileManager.default.contentsOfDirectory(atPath: path)
      let segments = names.filter { $0.hasSuffix(".seg") }.count
      let hints = names.filter { $0.hasSuffix(".hint") }.count
      #expect(segments > 5)
      #expect(hints == segments, "\(hints) hints for \(segments) segments")
      #expect(!names.contains { $0.hasSuffix(".tmp") })
      let reopened = try CaskStore(path: path, password: testPassword, options: testStoreOptions)
      defer { try? reopened.close() }
      #expect(reopened.stats().recovery.segmentsScanned == 0)
      #expect(reopened.count == 500)
    }
  }
}
