//! Task list operations: numeric ids and dependency edges kept symmetric.

use serde_json::{Map, Value};

use crate::state::{Task, TaskState, TasksContext};

impl TasksContext {
    /// The task with id `id`.
    #[must_use]
    pub fn task(&self, id: &str) -> Option<&Task> {
        self.tasks.iter().find(|t| t.id == id)
    }

    pub(super) fn task_mut_pub(&mut self, id: &str) -> Option<&mut Task> {
        self.task_mut(id)
    }

    fn task_mut(&mut self, id: &str) -> Option<&mut Task> {
        self.tasks.iter_mut().find(|t| t.id == id)
    }

    /// The next id: one more than the largest numeric id so far, from `1`.
    #[must_use]
    pub fn next_id(&self) -> String {
        let max = self
            .tasks
            .iter()
            .filter_map(|t| t.id.parse::<u64>().ok())
            .max()
            .unwrap_or(0);
        (max + 1).to_string()
    }

    /// Adds a pending task with the next id; returns the id.
    pub fn create(
        &mut self,
        subject: impl Into<String>,
        description: impl Into<String>,
        metadata: Map<String, Value>,
    ) -> String {
        let id = self.next_id();
        self.tasks.push(Task {
            subject: subject.into(),
            description: description.into(),
            metadata,
            created_at: oxiscope_message::stamp::now(),
            state: TaskState::Pending,
            id: id.clone(),
            owner: None,
            blocks: Vec::new(),
            blocked_by: Vec::new(),
        });
        id
    }

    /// Whether `from` reaches `to` along `blocks` edges.
    fn reaches(&self, from: &str, to: &str) -> bool {
        let mut stack = vec![from.to_owned()];
        let mut seen = Vec::new();
        while let Some(id) = stack.pop() {
            if id == to {
                return true;
            }
            if seen.contains(&id) {
                continue;
            }
            if let Some(task) = self.task(&id) {
                stack.extend(task.blocks.iter().cloned());
            }
            seen.push(id);
        }
        false
    }

    /// Records that `blocker` must finish before `blocked`, on both tasks.
    ///
    /// # Errors
    ///
    /// A task is missing, the two are the same, or the edge would make a
    /// cycle; the message is for the model.
    pub fn add_dependency(&mut self, blocker: &str, blocked: &str) -> Result<(), String> {
        if blocker == blocked {
            return Err(format!(
                "Error: The task (id={blocker}) cannot block itself."
            ));
        }
        for id in [blocker, blocked] {
            if self.task(id).is_none() {
                return Err(format!(
                    "TaskNotFoundError: The task (id={id}) does not exist."
                ));
            }
        }
        if self.reaches(blocked, blocker) {
            return Err(format!(
                "Error: The task (id={blocker}) cannot block the task (id={blocked}): the \
                 task (id={blocked}) already comes before it, so this would be a cycle."
            ));
        }
        if let Some(t) = self.task_mut(blocker)
            && !t.blocks.iter().any(|b| b == blocked)
        {
            t.blocks.push(blocked.to_owned());
        }
        if let Some(t) = self.task_mut(blocked)
            && !t.blocked_by.iter().any(|b| b == blocker)
        {
            t.blocked_by.push(blocker.to_owned());
        }
        Ok(())
    }

    /// Sets a task's state; completing it releases the tasks it blocked.
    pub fn set_state(&mut self, id: &str, state: TaskState) {
        let mut released = Vec::new();
        if let Some(task) = self.task_mut(id) {
            task.state = state;
            if state == TaskState::Completed {
                released = std::mem::take(&mut task.blocks);
            }
        }
        for dependent in released {
            if let Some(t) = self.task_mut(&dependent) {
                t.blocked_by.retain(|b| b != id);
            }
        }
    }

    /// Removes a task; whatever it waited for now blocks whatever waited
    /// for it (unless already completed). Returns the removed task.
    pub fn delete(&mut self, id: &str) -> Option<Task> {
        let index = self.tasks.iter().position(|t| t.id == id)?;
        let task = self.tasks.remove(index);
        for t in &mut self.tasks {
            t.blocks.retain(|b| b != id);
            t.blocked_by.retain(|b| b != id);
        }
        for before in &task.blocked_by {
            let open = self
                .task(before)
                .is_some_and(|t| t.state != TaskState::Completed);
            if open {
                for after in &task.blocks {
                    let _ = self.add_dependency(before, after);
                }
            }
        }
        Some(task)
    }
}
