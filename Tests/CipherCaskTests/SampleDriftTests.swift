import Foundation
import Testing

/// Every Swift sample in Docs/GUIDE.md, and the collections quick start in README.md, must
/// appear line for line (indentation aside) in this test target, where it compiles and runs.
@Suite("Documented samples never drift from compiled code")
struct SampleDriftTests {
  private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

  /// The Swift code blocks of a Markdown text, each as its trimmed, non-empty lines except
  /// `import` lines (the target's files import what their samples need).
  private static func swiftBlocks(_ markdown: String) -> [[String]] {
    var blocks: [[String]] = []
    var current: [String]?
    for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
      let trimmed = line.trimmingCharacters(in: .whitespaces)
      if current == nil, trimmed == "```swift" {
        current = []
      } else if current != nil, trimmed == "```" {
        blocks.append(current ?? [])
        current = nil
      } else if !trimmed.isEmpty, !trimmed.hasPrefix("import ") {
        current?.append(trimmed)
      }
    }
    return blocks
  }

  /// The trimmed, non-empty lines of every Swift file of this target.
  private static func targetLines() throws -> [String] {
    let folder = root.appendingPathComponent("Tests/CipherCaskTests")
    var lines: [String] = []
    for name in try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() where name.hasSuffix(".swift")
    {
      let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
      lines += text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
    return lines
  }

  private static func contains(_ lines: [String], _ block: [String]) -> Bool {
    guard !block.isEmpty, block.count <= lines.count else { return block.isEmpty }
    return (0...(lines.count - block.count)).contains { start in Array(lines[start..<(start + block.count)]) == block }
  }

  @Test("every Swift block of Docs/GUIDE.md is compiled in this target")
  func guideBlocksAreCompiled() throws {
    let guide = try String(contentsOf: Self.root.appendingPathComponent("Docs/GUIDE.md"), encoding: .utf8)
    let blocks = Self.swiftBlocks(guide)
    #expect(blocks.count >= 10)
    let lines = try Self.targetLines()
    for block in blocks {
      #expect(Self.contains(lines, block), "not compiled: \(block.first ?? "")")
    }
  }

  @Test("README's collections quick start is compiled in this target")
  func readmeQuickStartIsCompiled() throws {
    let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
    let section = try #require(readme.range(of: "## Quick start: collections"))
    let block = try #require(Self.swiftBlocks(String(readme[section.upperBound...])).first)
    #expect(block.contains { $0.contains("users.filter") })
    #expect(Self.contains(try Self.targetLines(), block))
  }
}
