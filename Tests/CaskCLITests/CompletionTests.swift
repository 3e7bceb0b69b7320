import CaskTestSupport
import Foundation
import Testing

/// `cask completion bash|zsh|fish`: scripts that name every subcommand, load in bash, and
/// register a completion for `cask`.
@Suite("Shell completion scripts")
struct CompletionTests {
  @Test("the bash script parses (bash -n) and registers a completion for cask (complete -p)")
  func bashLoads() throws {
    let cask = try CaskRunner("completion-bash")
    defer { cask.remove() }
    let result = try cask.run(["completion", "bash"])
    #expect(result.status == 0, "\(result.err)")
    try result.stdout.write(to: URL(fileURLWithPath: cask.path("cask.bash")))
    let check = Process()
    check.executableURL = URL(fileURLWithPath: "/bin/bash")
    check.arguments = ["-c", #"bash -n "$1" && source "$1" && complete -p cask"#, "bash", cask.path("cask.bash")]
    let output = Pipe()
    check.standardOutput = output
    try check.run()
    check.waitUntilExit()
    #expect(check.terminationStatus == 0)
    let registered = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    #expect(registered == "complete -o filenames -F _cask cask\n", "\(registered)")
  }

  @Test("every script names every subcommand; another shell is a usage error", arguments: ["bash", "zsh", "fish"])
  func scriptsNameSubcommands(shell: String) throws {
    let cask = try CaskRunner("completion-\(shell)")
    defer { cask.remove() }
    let result = try cask.run(["completion", shell])
    #expect(result.status == 0)
    let options = shell == "fish" ? ["-l collection", "-l skip-damaged"] : ["--collection", "--skip-damaged"]
    for name in ["import", "export", "salvage", "upgrade", "completion"] + options {
      #expect(result.out.contains(name), "\(shell) script lacks \(name)")
    }
    let other = try cask.run(["completion", "tcsh"])
    #expect(other.status == 64)
    #expect(other.err.hasPrefix("Error: The shell must be one of 'bash', 'zsh', 'fish'\n"))
  }
}
