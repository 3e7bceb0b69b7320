import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// The `async` forms of `backup(to:)` and `rekeyedCopy(to:password:)`: a task cancelled before
/// the copy starts gets `CancellationError` and nothing is written; one cancelled while it
/// copies ends with either nothing written or a whole copy, never a part.
@Suite("async backup and rekeyed copy under task cancellation")
struct AsyncCopyCancellationTests {
  /// A store of `megabytes` random 1-MiB values, so that a copy asks to continue many times.
  private static func store(in directory: TemporaryDirectory, megabytes: Int) throws -> (CaskStore, [String: Data]) {
    var random = SeededRandom.make(test: "AsyncCopyCancellationTests")
    let store = try CaskStore(path: directory.file("s.cask"), password: "pw", options: .init(durability: .never))
    var model: [String: Data] = [:]
    for index in 0..<megabytes {
      let value = random.bytes(1 << 20)
      try store.put(value, forKey: "value-\(index)")
      model["value-\(index)"] = value
    }
    return (store, model)
  }

  private static func contents(of path: String, password: String) throws -> [String: Data] {
    let copy = try CaskStore(path: path, password: password, options: .init(readOnly: true))
    defer { try? copy.close() }
    var contents: [String: Data] = [:]
    for key in try copy.keys() { contents[key] = try copy.get(key) }
    return contents
  }

  @Test("a task cancelled before the call: CancellationError, and neither copy is begun")
  func cancelledBeforeTheCall() async throws {
    try await withTemporaryDirectory("async-copy-before") { directory async throws in
      let (store, _) = try Self.store(in: directory, megabytes: 1)
      defer { try? store.close() }
      let task = Task {
        withUnsafeCurrentTask { $0?.cancel() }
        var errors: [any Error] = []
        do { try await store.backup(to: directory.file("backup.cask")) } catch { errors.append(error) }
        do { try await store.rekeyedCopy(to: directory.file("rekeyed.cask"), password: "new") } catch {
          errors.append(error)
        }
        return errors
      }
      let errors = await task.value
      #expect(errors.count == 2 && errors.allSatisfy { $0 is CancellationError }, "\(errors)")
      #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["s.cask"])
    }
  }

  @Test("a task cancelled while it copies leaves nothing or a whole copy", arguments: ["backup", "rekey"])
  func cancelledWhileCopying(operation: String) async throws {
    try await withTemporaryDirectory("async-copy-during") { directory async throws in
      let (store, model) = try Self.store(in: directory, megabytes: 24)
      defer { try? store.close() }
      let destination = directory.file("copies/copy.cask")
      let task = Task {
        if operation == "backup" {
          try await store.backup(to: destination)
        } else {
          try await store.rekeyedCopy(to: destination, password: "new")
        }
      }
      // No timing is asserted: the copy is watched for its first file and cancelled then (or,
      // had it finished first, when it has).
      var polls = 0
      while !FileManager.default.fileExists(atPath: directory.file("copies")) && polls < 100_000 {
        try await Task.sleep(nanoseconds: 100_000)
        polls += 1
      }
      task.cancel()
      let result = await task.result
      let left = (try? FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()) ?? []
      switch result {
      case .success:
        #expect(try Self.contents(of: destination, password: operation == "backup" ? "pw" : "new") == model)
      case .failure(let error):
        #expect(error is CancellationError, "\(error)")
        #expect(left == ["s.cask"], "left behind: \(left)")
      }
      for (key, value) in model { #expect(try store.get(key) == value, "the store is as it was") }
    }
  }
}
