// Package skills loads skills in the open Agent Skills format
// (agentskills.io): a folder <dir>/<name>/ holding SKILL.md (YAML front
// matter with name and description, then Markdown instructions) and
// optional scripts/, references/ and assets/.
//
// Nothing runs because a file says so. A skill is offered to the model
// only while its exact content is approved: Digest covers every file of
// the folder, and the store (Store) keeps the digest an approver enabled,
// shared by the instances. A skill found new or changed is pending: not
// offered until approved again (/skill NAME enable, `bot skills approve`).
//
// The map:
//   - parse.go: the front matter, checked against the specification
//     (Validate names the field and the rule a skill breaks).
//   - load.go: a folder read through os.Root, bounded (MaxSkillMD,
//     MaxSkillBytes, MaxSkillFiles), refused when a symlink leads out.
//   - catalog.go: what is on disk beside what the store approved; the
//     system prompt's list (progressive disclosure: name and description
//     only, bounded by max_listed and PromptBudget).
//   - tool.go: the read-only `skill` tool (the instructions or one file,
//     confined to the folder); write.go: `write_skill`, held by Gate
//     whatever the policy says, written through os.Root on approval.
//   - commands.go: /skills and /skill NAME enable|disable.
//
// A skill's scripts are never run here: the model runs them through the
// shell tool, which the policy judges as any command.
package skills
