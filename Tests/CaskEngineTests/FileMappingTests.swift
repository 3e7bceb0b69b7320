import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// Point reads copy records out of a mapping of their segment (`FileMapping`), and appends
/// into the space the writer reserved ahead copy records into it; a file cut short under the
/// mapping, which raises SIGBUS when a copy touches a page past its end, must turn into the
/// error a `pread` or `pwrite` gives, never a crash.
@Suite("Reads and appends through mapped segments")
struct FileMappingTests {
  /// A store without the record cache, so that every get reads its segment.
  private static var uncachedOptions: CaskStore.Options {
    var options = testStoreOptions
    options.recordCacheBytes = 0
    return options
  }

  private static func location(of key: String, in store: CaskStore) throws -> (RecordLocation, String) {
    try store.state.withLock { state in
      let location = try #require(state.directory[IndexKey(key)])
      return (location, try #require(state.segments[location.segment]).path)
    }
  }

  @Test("a mapping copies what the file holds, sees what is written after it was made, and fails past the end")
  func mappingCopiesAndFails() throws {
    try withTemporaryDirectory("mapped-copy") { directory throws in
      let path = directory.file("file")
      let file = try PosixFileSystem().open(path, mode: .createNew)
      defer { file.close() }
      let first = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
      try file.write(first, at: 0)
      var buffer = [UInt8](repeating: 0, count: 300)
      // The first read is left to `pread`: a file read once is never mapped.
      #expect(!buffer.withUnsafeMutableBytes { file.readMapped(into: $0, at: 4000) })
      #expect(buffer.withUnsafeMutableBytes { file.readMapped(into: $0, at: 4000) })
      #expect(buffer == Array(first[4000..<4300]))

      // Written after the mapping was made: the same pages, and new ones.
      let second = Data(repeating: 0xA5, count: 20000)
      try file.write(second, at: 5000)
      #expect(buffer.withUnsafeMutableBytes { file.readMapped(into: $0, at: 24000) })
      #expect(buffer == [UInt8](repeating: 0xA5, count: 300))

      // Cut to one page: a copy from the pages after it is stopped by SIGBUS and fails.
      try file.truncate(to: 4096)
      #expect(!buffer.withUnsafeMutableBytes { file.readMapped(into: $0, at: 12288) })
      #expect(!buffer.withUnsafeMutableBytes { file.readMapped(into: $0, at: 4000) })
      #expect(buffer.withUnsafeMutableBytes { file.readMapped(into: $0, at: 100) })
      #expect(buffer == Array(first[100..<400]))
    }
  }

  @Test("threads that make a file's mapping at once all read through it, and it outlives the file's close")
  func threadsMappingAtOnceShareTheMapping() throws {
    try withTemporaryDirectory("mapped-race") { directory throws in
      let path = directory.file("file")
      let bytes = Data((0..<65536).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 8) })
      let writer = try PosixFileSystem().open(path, mode: .createNew)
      try writer.write(bytes, at: 0)
      writer.close()
      let expected = [UInt8](bytes)
      for _ in 0..<testIterations(20) {
        let file = try PosixFileSystem().open(path, mode: .readOnly)
        // The first read maps nothing; the threads race to make the mapping at the second.
        var first = [UInt8](repeating: 0, count: 16)
        #expect(!first.withUnsafeMutableBytes { file.readMapped(into: $0, at: 0) })
        let failures = Locked<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 8) { (thread: Int) in
          var buffer = [UInt8](repeating: 0, count: 512)
          for step in 0..<16 {
            let offset = (thread * 16 + step) * 512
            let copied = buffer.withUnsafeMutableBytes { file.readMapped(into: $0, at: UInt64(offset)) }
            if !copied || buffer != Array(expected[offset..<offset + 512]) { failures.withLock { $0 += 1 } }
          }
        }
        #expect(failures.withLock { $0 } == 0)
        // The mapping stays valid after the descriptor is closed, until the file goes.
        file.close()
        var buffer = [UInt8](repeating: 0, count: 16)
        #expect(buffer.withUnsafeMutableBytes { file.readMapped(into: $0, at: 100) })
        #expect(buffer == Array(expected[100..<116]))
      }
    }
  }

  @Test("a copy into a writable mapping is what a read then finds; past the end or into a read-only file it fails")
  func mappedWriteReachesTheFile() throws {
    try withTemporaryDirectory("mapped-write") { directory throws in
      let path = directory.file("file")
      let file = try PosixFileSystem().open(path, mode: .createNew)
      defer { file.close() }
      try file.write(Data(count: 8192), at: 0)
      let payload = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) }
      #expect(payload.withUnsafeBytes { file.writeMapped($0, at: 4000) })
      #expect(try file.read(count: 300, at: 4000) == Data(payload))
      // Another descriptor's `pread` sees the same page cache.
      let reader = try PosixFileSystem().open(path, mode: .readOnly)
      defer { reader.close() }
      #expect(try reader.read(count: 300, at: 4000) == Data(payload))
      #expect(!payload.withUnsafeBytes { reader.writeMapped($0, at: 0) })
      #expect(try reader.read(count: 300, at: 0) == Data(count: 300))

      // Crossing the file's end: the copy stops at the first page past it, the file keeps its size.
      #expect(!payload.withUnsafeBytes { file.writeMapped($0, at: 8000) })
      #expect(try file.size() == 8192)
      try file.truncate(to: 4096)
      #expect(!payload.withUnsafeBytes { file.writeMapped($0, at: 5000) })
      #expect(try file.size() == 4096)
      #expect(payload.withUnsafeBytes { file.writeMapped($0, at: 0) })
      #expect(try file.read(count: 300, at: 0) == Data(payload))
    }
  }

  @Test("appends into reserved space are copied into the mapping instead of written, and read back after a reopen")
  func appendsGoThroughTheMapping() throws {
    let fileSystem = SegmentCallCounter()
    var options = testStoreOptions
    options.durability = .never
    options.fileSystem = fileSystem
    try withTemporaryDirectory("mapped-append") { directory throws in
      let path = directory.file("store.cask")
      let store = try CaskStore(path: path, password: testPassword, options: options)
      let values = (0..<200).map { Data(repeating: UInt8($0), count: 1000) }
      fileSystem.calls.withLock { $0 = SegmentCallCounter.Calls() }
      for (index, value) in values.enumerated() { try store.put(value, forKey: "key-\(index)") }
      #expect(try store.delete("key-0"))
      let (writes, mapped) = fileSystem.calls.withLock { ($0.writes, $0.mappedWrites) }
      // 201 records of about 1.2 KB, 240 KB: one write of reserved zeros, the rest copies.
      #expect(mapped == 201, "\(mapped) appends copied into the mapping")
      #expect(writes <= 2, "\(writes) segment writes")
      try store.close()
      let reopened = try CaskStore(path: path, password: testPassword, options: testStoreOptions)
      defer { try? reopened.close() }
      #expect(try reopened.get("key-0") == nil)
      for index in 1..<values.count { #expect(try reopened.get("key-\(index)") == values[index]) }
    }
  }

  @Test("a store opened for one get reads its record without mapping the segment; the next get maps it")
  func oneGetAfterOpenMapsNothing() throws {
    let fileSystem = SegmentCallCounter()
    var options = Self.uncachedOptions
    options.fileSystem = fileSystem
    try withTemporaryDirectory("mapped-first-read") { directory throws in
      let path = directory.file("store.cask")
      let store = try CaskStore(path: path, password: testPassword, options: options)
      for index in 0..<50 { try store.put(Data(repeating: UInt8(index), count: 500), forKey: "key-\(index)") }
      try store.close()
      let reopened = try CaskStore(path: path, password: testPassword, options: options)
      defer { try? reopened.close() }
      fileSystem.calls.withLock { $0 = SegmentCallCounter.Calls() }
      #expect(try reopened.get("key-7") == Data(repeating: 7, count: 500))
      #expect(fileSystem.calls.withLock { $0.mappedReads } == 0)
      #expect(try reopened.get("key-8") == Data(repeating: 8, count: 500))
      #expect(fileSystem.calls.withLock { $0.mappedReads } == 1)
    }
  }

  @Test("a get whose record a segment cut short no longer holds is a corrupt-record error; records before the cut read")
  func getPastACut() throws {
    try withStore(options: Self.uncachedOptions, label: "mapped-cut") { store, _ throws in
      let keys = (0..<120).map { "key-\($0)" }
      let values = keys.map { key in Data((key + String(repeating: "v", count: 1000)).utf8) }
      for (key, value) in zip(keys, values) { try store.put(value, forKey: key) }
      // The segment is mapped now: by the appends, or at its second read.
      #expect(try store.get(keys[0]) == values[0])
      #expect(try store.get(keys[1]) == values[1])
      let (cutRecord, segmentPath) = try Self.location(of: keys[100], in: store)
      let cut = Int(cutRecord.offset) / 4096 * 4096
      try FileDamage.truncate(segmentPath, to: cut)
      for index in [100, 110, 119] {
        #expect {
          _ = try store.get(keys[index])
        } throws: { error in
          guard case .corrupt = error as? CaskError else { return false }
          return true
        }
      }
      for index in [0, 1, 50] { #expect(try store.get(keys[index]) == values[index]) }
    }
  }

  @Test("gets from many threads while a writer appends read every value written before them")
  func concurrentGetsWhileAppending() throws {
    try withStore(options: Self.uncachedOptions, label: "mapped-concurrent") { store, _ throws in
      for index in 0..<200 { try store.put(Data("value \(index)".utf8), forKey: "key-\(index)") }
      let failures = Locked(0)
      DispatchQueue.concurrentPerform(iterations: 5) { worker in
        if worker == 0 {
          for index in 200..<2000 { try? store.put(Data("value \(index)".utf8), forKey: "key-\(index)") }
          return
        }
        for round in 0..<2000 {
          let index = (round * 7 + worker) % 200
          if (try? store.get("key-\(index)")) != Data("value \(index)".utf8) { failures.withLock { $0 += 1 } }
        }
      }
      #expect(failures.withLock { $0 } == 0)
      for index in stride(from: 200, to: 2000, by: 97) {
        #expect(try store.get("key-\(index)") == Data("value \(index)".utf8))
      }
    }
  }

  /// Runs `cask-crash-writer --sigbus-chain` in `directory`, without the Swift runtime's own
  /// crash handler or a sanitizer's (either would otherwise be the handler before the store's).
  private static func runSigbusChild(in directory: String, ownHandler: Bool) throws -> Process {
    let process = Process()
    process.executableURL = try CrashWriterBinary.locate()
    process.arguments = ["--sigbus-chain", directory] + (ownHandler ? ["--own-handler"] : [])
    var environment = ProcessInfo.processInfo.environment
    environment["SWIFT_BACKTRACE"] = "enable=no"
    // Under a sanitizer the child's earlier handler would be the sanitizer's (which reports
    // and exits 1): left out, so that the default action is what follows the store's handler.
    for name in ["ASAN_OPTIONS", "TSAN_OPTIONS"] {
      environment[name] = (environment[name].map { $0 + ":" } ?? "") + "handle_sigbus=0"
    }
    process.environment = environment
    try process.run()
    process.waitUntilExit()
    return process
  }

  @Test("a SIGBUS that is not a mapped copy's goes to the handler installed before the store's")
  func otherSigbusReachesEarlierHandler() throws {
    try withTemporaryDirectory("mapped-chain") { directory throws in
      let process = try Self.runSigbusChild(in: directory.path, ownHandler: true)
      #expect(process.terminationReason == .exit)
      #expect(process.terminationStatus == 42, "exit status \(process.terminationStatus) (2: set-up, 3 and 4: the cut)")
    }
  }

  @Test("a SIGBUS that is not a mapped copy's still ends the process when nothing else handles it")
  func otherSigbusKeepsItsDefaultAction() throws {
    try withTemporaryDirectory("mapped-default") { directory throws in
      let process = try Self.runSigbusChild(in: directory.path, ownHandler: false)
      #expect(process.terminationReason == .uncaughtSignal)
      #expect(process.terminationStatus == SIGBUS, "status \(process.terminationStatus) (2: set-up, 3 and 4: the cut)")
    }
  }
}
