; Inno Setup script for Timothy's Windows installer (Inno Setup 6).
;
; Build the bundle first (README, "Packaging"), then from the repository root:
;   iscc /DAppVersion=0.1.0 packaging\windows\timothy.iss
; which writes dist\Timothy-0.1.0-windows-x64-setup.exe. It installs per user by default
; (no administrator needed); the dialog offers an install for all users.

#ifndef AppVersion
  #define AppVersion "0.1.0"
#endif

[Setup]
AppId={{5C2B7E0A-63C4-4B0D-9E7A-7A1D3F6C2E51}
AppName=Timothy
AppVersion={#AppVersion}
AppVerName=Timothy {#AppVersion}
AppPublisher=Timothy
DefaultDirName={autopf}\Timothy
DefaultGroupName=Timothy
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
OutputDir=..\..\dist
OutputBaseFilename=Timothy-{#AppVersion}-windows-x64-setup
SetupIconFile=..\..\resources\icons\timothy.ico
UninstallDisplayIcon={app}\timothy.exe
UninstallDisplayName=Timothy
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
ChangesEnvironment=yes
; The owner's memories live in the user data folder, not here: uninstalling never removes them.

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked
Name: "addtopath"; Description: "Put the timothy-cli command on PATH"; GroupDescription: "Command line:"; Flags: unchecked

[Files]
; The whole one-folder bundle: timothy.exe (the app), timothy-cli.exe (commands) and _internal.
Source: "..\..\dist\Timothy\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\Timothy"; Filename: "{app}\timothy.exe"
Name: "{autodesktop}\Timothy"; Filename: "{app}\timothy.exe"; Tasks: desktopicon

[Registry]
Root: HKA; Subkey: "{code:EnvironmentKey}"; ValueType: expandsz; ValueName: "Path"; \
  ValueData: "{olddata};{app}"; Tasks: addtopath; Check: NotOnPath(ExpandConstant('{app}'))

[Run]
Filename: "{app}\timothy.exe"; Description: "{cm:LaunchProgram,Timothy}"; Flags: nowait postinstall skipifsilent

[Code]
function EnvironmentKey(Param: String): String;
begin
  if IsAdminInstallMode then
    Result := 'SYSTEM\CurrentControlSet\Control\Session Manager\Environment'
  else
    Result := 'Environment';
end;

function EnvironmentRoot: Integer;
begin
  if IsAdminInstallMode then Result := HKEY_LOCAL_MACHINE else Result := HKEY_CURRENT_USER;
end;

function NotOnPath(Folder: String): Boolean;
var
  Path: String;
begin
  if not RegQueryStringValue(EnvironmentRoot, EnvironmentKey(''), 'Path', Path) then
    Path := '';
  Result := Pos(';' + Uppercase(Folder) + ';', ';' + Uppercase(Path) + ';') = 0;
end;

procedure CurUninstallStepChanged(CurUninstallStep: TUninstallStep);
var
  Path, Folder: String;
  At: Integer;
begin
  { Take the install folder back off PATH, if the installer put it there. }
  if CurUninstallStep <> usPostUninstall then
    exit;
  if not RegQueryStringValue(EnvironmentRoot, EnvironmentKey(''), 'Path', Path) then
    exit;
  Folder := ExpandConstant('{app}');
  Path := ';' + Path + ';';
  At := Pos(';' + Uppercase(Folder) + ';', Uppercase(Path));
  if At = 0 then
    exit;
  Delete(Path, At, Length(Folder) + 1);
  Path := Copy(Path, 2, Length(Path) - 2);
  RegWriteExpandStringValue(EnvironmentRoot, EnvironmentKey(''), 'Path', Path);
end;
