import CaskCLIKit

/// `cask completion bash|zsh|fish`: a completion script on standard output.
enum CompletionCommand: Subcommand {
  static var spec: CommandSpec { .completion }

  static func run(_ arguments: ParsedArguments) throws {
    let shell = arguments.argument("shell")
    guard let script = CompletionScript.script(for: shell) else {
      throw CLIError.usage("The shell must be one of 'bash', 'zsh', 'fish'", spec)
    }
    StandardStream.output.write(script)
  }
}
