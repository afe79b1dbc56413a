'use strict';
// Notes store for jot (demo task T1): notes live in .jot/notes.json under the current folder.

const fs = require('node:fs');
const path = require('node:path');

const file = () => path.join(process.cwd(), '.jot', 'notes.json');

function load() {
  try {
    return JSON.parse(fs.readFileSync(file(), 'utf8'));
  } catch {
    return { nextId: 1, notes: [] };
  }
}

function save(state) {
  fs.mkdirSync(path.dirname(file()), { recursive: true });
  fs.writeFileSync(file(), JSON.stringify(state, null, 2) + '\n');
}

function addNote(text) {
  const state = load();
  const note = { id: state.nextId++, text };
  state.notes.push(note);
  save(state);
  return note;
}

function listNotes() {
  return load().notes;
}

function removeNote(id) {
  const state = load();
  const before = state.notes.length;
  state.notes = state.notes.filter((n) => n.id !== id);
  save(state);
  return state.notes.length < before;
}

module.exports = { addNote, listNotes, removeNote };
