//! `suzent skills` and `suzent memory`: the headless side of what the desktop app shows for
//! skills and long-term memory.

use anyhow::Result;
use clap::Subcommand;
use std::process::ExitCode;
use suzent_runtime::Runtime;

/// `suzent skills` subcommands.
#[derive(Subcommand)]
pub enum SkillsCommand {
    /// Lists the skills (built-in, external, user) with their state.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Offers a skill to the model again.
    Enable {
        /// Skill name.
        name: String,
    },
    /// Stops offering a skill to the model.
    Disable {
        /// Skill name.
        name: String,
    },
}

/// `suzent memory` subcommands.
#[derive(Subcommand)]
pub enum MemoryCommand {
    /// Searches archival memory (full-text and, with the model, by meaning).
    Search {
        /// What to look for.
        query: String,
        /// Most results.
        #[arg(long, default_value_t = 5)]
        limit: usize,
    },
    /// Stores a memory in the archive.
    Add {
        /// The text to remember.
        text: String,
    },
    /// Shows the core memory blocks.
    Blocks,
    /// Replaces a core memory block (persona, user, facts, context); empty text clears it.
    SetBlock {
        /// Block name.
        block: String,
        /// New content.
        text: String,
    },
    /// Writes a summary of a chat into archival memory (asks the chat's model).
    Summarize {
        /// Chat id.
        #[arg(long)]
        chat: String,
    },
    /// Uses a provider's embedding model (`openai/text-embedding-3-small`) instead of the local
    /// one; `local` goes back to the local model.
    UseEmbeddings {
        /// `provider/model`, or `local`.
        model: String,
    },
    /// Downloads the local embedding model (all-MiniLM-L6-v2) once into the data folder.
    DownloadModel {
        /// Base URL holding model.safetensors, tokenizer.json and config.json.
        #[arg(long)]
        from: Option<String>,
    },
}

/// Runs one `suzent skills` command.
pub async fn skills(cmd: SkillsCommand, rt: Runtime) -> Result<ExitCode> {
    match cmd {
        SkillsCommand::List { json } => {
            let skills = rt.skills().await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&skills)?);
            } else if skills.is_empty() {
                println!("no skills");
            } else {
                for s in skills {
                    println!(
                        "{} {:<24} {:<9} {}",
                        if s.enabled { "on " } else { "off" },
                        s.name,
                        format!("{:?}", s.source).to_lowercase(),
                        s.description
                    );
                }
            }
        }
        SkillsCommand::Enable { name } => {
            rt.set_skill_enabled(&name, true).await?;
            println!("enabled skill {name}");
        }
        SkillsCommand::Disable { name } => {
            rt.set_skill_enabled(&name, false).await?;
            println!("disabled skill {name}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs one `suzent memory` command.
pub async fn memory(cmd: MemoryCommand, rt: Runtime) -> Result<ExitCode> {
    match cmd {
        MemoryCommand::Search { query, limit } => {
            let found = rt.search_memory(&query, limit).await?;
            if let Some(reason) = &found.text_only_reason {
                eprintln!("full-text search only: {reason}");
            }
            if found.hits.is_empty() {
                println!("no memories match");
            }
            for h in found.hits {
                println!(
                    "{:>6}  {}  {}  [{}]",
                    h.id,
                    h.created_at.get(..10).unwrap_or(&h.created_at),
                    h.content,
                    h.matched_by.join("+")
                );
            }
        }
        MemoryCommand::Add { text } => {
            let ids = rt.archive_memories(None, "cli", &[text]).await?;
            println!("stored memory {}", ids.first().copied().unwrap_or_default());
        }
        MemoryCommand::Blocks => {
            let blocks = rt.memory_blocks().await?;
            if blocks.is_empty() {
                println!("no core memory yet");
            }
            for (block, content) in blocks {
                println!("[{block}]\n{content}\n");
            }
        }
        MemoryCommand::SetBlock { block, text } => {
            rt.set_memory_block(&block, &text).await?;
            println!("updated block {block}");
        }
        MemoryCommand::Summarize { chat } => match rt.archive_chat_summary(&chat).await? {
            Some(id) => println!("stored the summary as memory {id}"),
            None => println!("nothing to summarize"),
        },
        MemoryCommand::UseEmbeddings { model } => {
            let chosen = (model != "local").then_some(model.as_str());
            rt.set_embedding_provider(chosen).await?;
            println!("memory embeddings: {}", chosen.unwrap_or("local model"));
        }
        MemoryCommand::DownloadModel { from } => {
            let (dir, downloaded) = rt.download_embedding_model(from.as_deref()).await?;
            if downloaded {
                println!("downloaded the embedding model into {}", dir.display());
            } else {
                println!("the embedding model is already in {}", dir.display());
            }
            // Memories stored before the model get their vectors now (the backfill would
            // otherwise stop when this process exits).
            let mut status = rt.embedding_status().await?;
            if status.backfilling {
                eprintln!(
                    "embedding {} older memories...",
                    status.entries_without_vector
                );
                while status.backfilling {
                    tokio::time::sleep(std::time::Duration::from_millis(250)).await;
                    status = rt.embedding_status().await?;
                }
                match status.entries_without_vector {
                    0 => println!("every memory has a vector"),
                    n => println!("{n} memories still have no vector (see the log for why)"),
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
