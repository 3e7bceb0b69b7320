import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// Two states of one store, an older and a newer, and every mix of their files that differs
/// from one of them in at most two files (each such file taken from the other state, or
/// missing; `CASK_TEST_ITERATIONS` of 2 or more allows three). Each mix must either be
/// reported (open refuses it, or `verify` finds damage) or open to a state the store really
/// had: the older, the newer, one it passed through between them (the newest segments cut
/// off, as a crash leaves them), or the empty one it was created as (every file but the
/// header removed). Never a third state. The enumerator is shown to catch one:
/// on a version 3 store the same mixes include an older manifest with a middle segment
/// missing, which opens to a state that never existed.
@Suite struct FileMixTests {
  struct History {
    var older: [String: Data]
    var newer: [String: Data]
    /// What the store held after each step from the older state to the newer one.
    var states: [[String: Data]]
  }

  private static func options(version: UInt16) -> CaskStore.Options {
    var options = testStoreOptions
    options.segmentSizeLimit = 1024
    options.autoCompaction = nil
    options.newStoreFormatVersion = version
    return options
  }

  /// Writes the older state, closes it, then writes on through several segments (a delete in
  /// the middle of them), compacts when asked, writes a little more and closes.
  static func makeHistory(in directory: TemporaryDirectory, version: UInt16, compacts: Bool) throws -> History {
    let path = directory.file("history.cask")
    let options = options(version: version)
    var model: [String: Data] = [:]
    // The empty store its creation left is a state it had too (every segment and the
    // manifest removed leaves it: a rollback only an integrity token tells).
    var states = [model]
    var store = try CaskStore(path: path, password: testPassword, options: options)
    func put(_ key: String, _ value: Data) throws {
      try store.put(value, forKey: key)
      model[key] = value
    }
    try put("gone", Data("here".utf8))
    try put("kept", Data(repeating: 1, count: 300))
    try store.close()
    let older = try FileDamage.files(ofStore: path)
    states.append(model)
    store = try CaskStore(path: path, password: testPassword, options: options)
    for index in 0..<3 {
      try put("fill-\(index)", Data(repeating: UInt8(index), count: 300))
      states.append(model)
    }
    try store.delete("gone")
    model["gone"] = nil
    states.append(model)
    for index in 0..<3 {
      try put("later-\(index)", Data(repeating: UInt8(index), count: 300))
      states.append(model)
    }
    if compacts {
      _ = try store.compact()
      try put("after", Data("compaction".utf8))
      states.append(model)
    }
    try store.close()
    return History(older: older, newer: try FileDamage.files(ofStore: path), states: states)
  }

  /// What a mix opens to: `nil` when open or `verify` reports something.
  private static func served(_ path: String, version: UInt16) -> [String: Data]? {
    var options = options(version: version)
    options.readOnly = true
    guard let store = try? CaskStore(path: path, password: testPassword, options: options) else { return nil }
    defer { try? store.close() }
    guard let report = try? store.verify(), report.isClean, let keys = try? store.keys() else { return nil }
    var contents: [String: Data] = [:]
    for key in keys {
      guard let value = try? store.get(key) else { return nil }
      contents[key] = value
    }
    return contents
  }

  /// Every mix within `deviations` files of either state, each as name → bytes (a name left
  /// out is missing).
  static func mixes(of history: History, deviations: Int) -> [[String: Data]] {
    let names = Set(history.older.keys).union(history.newer.keys).sorted()
    var seen: Set<[String: Data]> = []
    var result: [[String: Data]] = []
    for (base, other) in [(history.newer, history.older), (history.older, history.newer)] {
      // What each name can become instead of the base's version.
      let alternatives: [(String, Data?)] = names.flatMap { name -> [(String, Data?)] in
        var choices: [(String, Data?)] = []
        if let version = other[name], version != base[name] { choices.append((name, version)) }
        if base[name] != nil { choices.append((name, nil)) }
        return choices
      }
      func extend(_ mix: [String: Data], from start: Int, left: Int, changed: Set<String>) {
        if seen.insert(mix).inserted { result.append(mix) }
        guard left > 0 else { return }
        for index in start..<alternatives.count where !changed.contains(alternatives[index].0) {
          var next = mix
          next[alternatives[index].0] = alternatives[index].1
          extend(next, from: index + 1, left: left - 1, changed: changed.union([alternatives[index].0]))
        }
      }
      extend(base, from: 0, left: deviations, changed: [])
    }
    return result
  }

  /// Runs every mix; returns how many opened to a state that never existed, and counts.
  static func run(_ history: History, version: UInt16, in directory: TemporaryDirectory) throws -> (
    thirdStates: Int, refused: Int, total: Int
  ) {
    let deviations = testIterations(1) > 1 ? 3 : 2
    let mixes = mixes(of: history, deviations: deviations)
    var thirdStates = 0
    var refused = 0
    for (number, mix) in mixes.enumerated() {
      let path = directory.file("mix-\(number)")
      try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
      defer { try? FileManager.default.removeItem(atPath: path) }
      for (name, bytes) in mix { try bytes.write(to: URL(fileURLWithPath: "\(path)/\(name)")) }
      guard let contents = served(path, version: version) else {
        refused += 1
        continue
      }
      if !history.states.contains(contents) {
        thirdStates += 1
        let changed = Set(history.newer.keys).union(mix.keys).filter { mix[$0] != history.newer[$0] }.sorted().map {
          "\($0): \(mix[$0] == nil ? "missing" : mix[$0] == history.older[$0] ? "older" : "?")"
        }
        let changedOlder = Set(history.older.keys).union(mix.keys).filter { mix[$0] != history.older[$0] }.sorted()
        print("[FileMixTests] third state: from newer \(changed); from older \(changedOlder.count) files")
      }
    }
    print("[FileMixTests] version \(version): \(mixes.count) mixes within \(deviations) files, \(refused) reported")
    return (thirdStates, refused, mixes.count)
  }

  @Test(arguments: [false, true])
  func everyMixOfTwoStatesOpensToAStateTheStoreHadOrIsReported(compacts: Bool) throws {
    try withTemporaryDirectory("file-mix") { directory in
      let history = try Self.makeHistory(in: directory, version: 5, compacts: compacts)
      let outcome = try Self.run(history, version: 5, in: directory)
      #expect(outcome.total > 100)
      #expect(outcome.thirdStates == 0, "\(outcome.thirdStates) of \(outcome.total) mixes opened to a third state")
      #expect(outcome.refused > 0)
    }
  }

  /// The planted proof: without the chain (version 3) the enumerator finds a third state.
  @Test func theEnumeratorFindsAThirdStateInAVersionThreeStore() throws {
    try withTemporaryDirectory("file-mix-v3") { directory in
      let history = try Self.makeHistory(in: directory, version: 3, compacts: false)
      let outcome = try Self.run(history, version: 3, in: directory)
      #expect(outcome.thirdStates > 0)
    }
  }
}
