import Foundation
import Testing

@testable import CaskEngine

/// Docs/ARCHITECTURE.md and Docs/FORMAT.md against the code: the engine's file tables name
/// every source file and no file that is gone, the format versions they state are
/// `CaskFormat`'s, and FORMAT.md's numbered sections come in order. A document that drifts from
/// the code fails here rather than misleading its next reader.
@Suite("The architecture and format documents match the engine's sources")
struct ArchitectureDocTests {
  /// The repository's root, from this file's place in it (Tests/CaskEngineTests/).
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

  static func read(_ path: String) throws -> String {
    try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
  }

  /// Every `.swift` file under Sources/CaskEngine, by file name.
  static func engineSources() throws -> Set<String> {
    let folder = root.appendingPathComponent("Sources/CaskEngine")
    guard let walker = FileManager.default.enumerator(atPath: folder.path) else { return [] }
    var names: Set<String> = []
    while let path = walker.nextObject() as? String {
      if path.hasSuffix(".swift") { names.insert(URL(fileURLWithPath: path).lastPathComponent) }
    }
    return names
  }

  /// The file names in the first column of the tables of ARCHITECTURE.md's section 2.
  static func tabledFiles(in document: String) -> [String] {
    guard let start = document.range(of: "\n## 2. "), let end = document.range(of: "\n## 3. ") else { return [] }
    return document[start.upperBound..<end.lowerBound].split(separator: "\n").compactMap { line in
      guard line.hasPrefix("| `"), let close = line.dropFirst(3).firstIndex(of: "`") else { return nil }
      let name = line[line.index(line.startIndex, offsetBy: 3)..<close]
      return name.hasSuffix(".swift") ? String(name) : nil
    }
  }

  @Test("every engine source file has a row in ARCHITECTURE.md's section 2, and every row a file")
  func everyEngineFileIsTabled() throws {
    let sources = try Self.engineSources()
    let tabled = Self.tabledFiles(in: try Self.read("Docs/ARCHITECTURE.md"))
    #expect(sources.count > 50, "found only \(sources.count) engine sources under \(Self.root.path)")
    let missing = sources.subtracting(tabled).sorted()
    #expect(missing.isEmpty, "engine files without a row in ARCHITECTURE.md section 2: \(missing)")
    let gone = Set(tabled).subtracting(sources).sorted()
    #expect(gone.isEmpty, "rows in ARCHITECTURE.md section 2 for files that do not exist: \(gone)")
    let twice = Dictionary(grouping: tabled, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
    #expect(twice.isEmpty, "files with two rows: \(twice)")
  }

  @Test("the format versions ARCHITECTURE.md states are CaskFormat's")
  func statedVersionsAreTheCode() throws {
    let document = try Self.read("Docs/ARCHITECTURE.md")
    let row = document.split(separator: "\n").first { $0.hasPrefix("| `CaskFormat.swift` |") } ?? ""
    #expect(row.contains("the format version written (\(CaskFormat.formatVersion))"), "\(row)")
    #expect(row.contains("the oldest one read (\(CaskFormat.oldestReadableVersion))"), "\(row)")
    #expect(row.contains("key epochs (\(CaskFormat.keyEpochsVersion))"), "\(row)")
  }

  @Test("FORMAT.md's numbered sections and subsections come in order")
  func formatSectionsInOrder() throws {
    let headings = try Self.read("Docs/FORMAT.md").split(separator: "\n").filter {
      $0.hasPrefix("## ") || $0.hasPrefix("### ")
    }
    // "## 3a." sorts after "## 3." and before "## 4.": a section's number, then its letter.
    var previous: (section: Int, letter: String, sub: Int) = (0, "", 0)
    var numbered = 0
    for heading in headings {
      let words = heading.split(separator: " ")
      guard words.count > 1 else { continue }
      let number = words[1].trimmingCharacters(in: CharacterSet(charactersIn: "."))
      let parts = number.split(separator: ".")
      let digits = parts.first.map { $0.prefix { $0.isNumber } } ?? ""
      guard let section = Int(digits) else { continue }
      let letter = String(parts.first?.dropFirst(digits.count) ?? "")
      let sub = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
      let current = (section, letter, sub)
      let inOrder =
        current.0 > previous.section
        || (current.0 == previous.section
          && (letter > previous.letter || (letter == previous.letter && sub > previous.sub)))
      #expect(inOrder, "FORMAT.md: '\(heading)' comes after section \(previous)")
      previous = current
      numbered += 1
    }
    #expect(numbered > 20, "found only \(numbered) numbered headings in FORMAT.md")
  }
}
